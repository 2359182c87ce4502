package redisstore

// ResultKey returns the key of result id's hash in s.
func ResultKey(s *Store, id string) string { return s.base(id) + "r:" + id }

// Charges returns what s charges a result of size bytes in n pages, and
// its tombstone.
func Charges(s *Store, id string, size int64, n int) (int64, int64) { return s.charges(id, size, n) }
