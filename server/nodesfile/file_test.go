package nodesfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func readNodes(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// table is a stand-in for the server's node table and lock.
type table struct {
	mu    sync.Mutex
	lines []string
	f     *File
}

func (tb *table) create(line string) func() error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.lines = append(tb.lines, line)
	return tb.f.Add(func() []string { return append([]string(nil), tb.lines...) }, line)
}

func (tb *table) remove(i int) func() error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.lines = append(tb.lines[:i:i], tb.lines[i+1:]...)
	return tb.f.Replace(append([]string(nil), tb.lines...))
}

func mustWait(t *testing.T, wait func() error) {
	t.Helper()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestNodesFileAppends: the first change writes the file whole; later
// creations append one line each to the same file (same inode); any
// other change writes it whole again (a new inode by the rename).
func TestNodesFileAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes")
	tb := &table{f: New(path)}
	mustWait(t, tb.create("n1 np=2"))
	if got := readNodes(t, path); got != "n1 np=2\n" {
		t.Fatalf("after the first creation: %q", got)
	}
	ino := inode(t, path)
	for i := 2; i <= 5; i++ {
		mustWait(t, tb.create(fmt.Sprintf("n%d", i)))
		if got, want := readNodes(t, path), strings.Join(tb.lines, "\n")+"\n"; got != want {
			t.Fatalf("after creating n%d: %q, want %q", i, got, want)
		}
		if inode(t, path) != ino {
			t.Fatalf("creating n%d rewrote the file instead of appending", i)
		}
	}
	mustWait(t, tb.remove(1))
	if got := readNodes(t, path); got != "n1 np=2\nn3\nn4\nn5\n" {
		t.Fatalf("after deleting n2: %q", got)
	}
	if inode(t, path) == ino {
		t.Error("a deletion did not rewrite the file")
	}
	ino = inode(t, path)
	mustWait(t, tb.create("n6:ts gpus=1 big"))
	if got := readNodes(t, path); got != "n1 np=2\nn3\nn4\nn5\nn6:ts gpus=1 big\n" || inode(t, path) != ino {
		t.Fatalf("creation after a rewrite: %q (rewritten: %v)", got, inode(t, path) != ino)
	}
	if _, err := os.Stat(path + ".new"); err == nil {
		t.Error("nodes.new left behind")
	}
}

// TestNodesFileStartsFromDisk: a file holding exactly the table's lines
// is appended to from the start; one that differs (an administrator's
// file with comments and ranges) is written whole at the first change.
func TestNodesFileStartsFromDisk(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "same")
	os.WriteFile(same, []byte("a np=2\n"), 0o644)
	ino := inode(t, same)
	tb := &table{lines: []string{"a np=2"}, f: New(same)}
	mustWait(t, tb.create("b"))
	mustWait(t, tb.create("c"))
	if got := readNodes(t, same); got != "a np=2\nb\nc\n" || inode(t, same) != ino {
		t.Errorf("matching file: %q (rewritten: %v)", got, inode(t, same) != ino)
	}
	admin := filepath.Join(dir, "admin")
	os.WriteFile(admin, []byte("# cluster\nn[1-2] np=2\n"), 0o644)
	tb = &table{lines: []string{"n1 np=2", "n2 np=2"}, f: New(admin)}
	mustWait(t, tb.create("n3"))
	if got := readNodes(t, admin); got != "n1 np=2\nn2 np=2\nn3\n" {
		t.Errorf("administrator's file: %q", got)
	}
}

// TestNodesFileConcurrent: creations from many clients at once are all
// in the file, in the order of the table, when their waits return.
func TestNodesFileConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes")
	tb := &table{f: New(path)}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("node%02d", i)
			if err := tb.create(name)(); err != nil {
				errs <- err
				return
			}
			// acknowledged: the line is in the file now
			if !strings.Contains(readNodes(t, path), name+"\n") {
				errs <- fmt.Errorf("%s acknowledged but not in the file", name)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := readNodes(t, path), strings.Join(tb.lines, "\n")+"\n"; got != want {
		t.Errorf("file after 64 concurrent creations:\n%s\nwant\n%s", got, want)
	}
}

// TestNodesFileRecovers: a write that fails reports the error to its
// waiter; the next change writes the whole file, including the failed
// change; a file removed behind the server's back is written whole.
func TestNodesFileRecovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "priv")
	path := filepath.Join(dir, "nodes")
	tb := &table{f: New(path)}
	if err := tb.create("a")(); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	os.MkdirAll(dir, 0o755)
	mustWait(t, tb.create("b"))
	if got := readNodes(t, path); got != "a\nb\n" {
		t.Fatalf("after the failed write: %q", got)
	}
	os.Remove(path)
	mustWait(t, tb.create("c"))
	if got := readNodes(t, path); got != "a\nb\nc\n" {
		t.Fatalf("after the file was removed: %q", got)
	}
}
