package boundhttp

import "testing"

// TestAddrHostOfEveryAddressForm: the address part of a client's peer key,
// for every form RemoteAddr takes, allocation-free.
func TestAddrHostOfEveryAddressForm(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"[::1]:80", "::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:db8::1]", "[2001:db8::1]"},
		{"host", "host"},
		{"", ""},
		{":80", ""},
		{"pipe", "pipe"},
	} {
		if got := addrHost(tt.addr); got != tt.want {
			t.Errorf("addrHost(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { addrHost("192.0.2.1:1234"); addrHost("") }); n != 0 {
		t.Errorf("addrHost allocates %v times", n)
	}
}
