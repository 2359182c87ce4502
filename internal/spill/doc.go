// Package spill writes outputs too large to print or to hand a model to new
// files in a folder, within a bound on the bytes the folder's spilled files
// hold together, the oldest removed first. It is the one owner of that
// logic for mcpbound's ClientLimits and the fetch example.
//
// The folder must be the process's user's to change alone: a directory
// (never a symbolic link, which another user could point elsewhere) owned
// by the effective user, that neither group nor others may write to. An
// ordinary folder (mode 0755, what mkdir and t.TempDir make) is accepted:
// others may list its names, but the files are created with mode 0600, so
// they cannot read one, and without write permission they cannot remove or
// replace one. A missing folder is created with mode 0700; one that fails a
// check is refused with an error that says which, and nothing is written.
// Otherwise another local user who can create the folder first in a shared
// temporary directory (or write into it) could read the results, or
// replace a file after it was written so that the note naming it points at
// forged text. The same holds
// one level up: every folder on the way to it (and every symbolic link
// among them) must be owned by the user or root, and a folder others may
// write to must have the sticky bit (as /tmp has), or its owner or writers
// could rename the folder away and put theirs in its place. Files are then
// created and removed relative to the opened folder (os.Root), so that a
// folder swapped after the check is never written through.
package spill
