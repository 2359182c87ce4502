package body

// FinishIdle is Finish, reporting whether no Read, WriteTo or ReadAll was
// in progress: only then is the source free for the caller to read (a
// server draining the rest of a request body after its handler returned,
// which a handler still running, behind http.TimeoutHandler, may not have
// done with). Later Reads fail either way.
func (b *Body) FinishIdle() bool {
	old := b.g.state.Or(guardClosed)
	b.fence()
	if old == 0 {
		b.release() // the first close, with no Read: the state is ours
	}
	return old&guardReading == 0
}
