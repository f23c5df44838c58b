package pbs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestServerNameFile(t *testing.T) {
	home := t.TempDir()
	if got := ServerNameFile(home); got != "" {
		t.Errorf("no file: %q", got)
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("vm\n\n  fb:15005 \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ServerNameFile(home); got != "vm,fb:15005" {
		t.Errorf("ServerNameFile = %q", got)
	}
	t.Setenv("PBS_DEFAULT", "")
	t.Setenv("PBS_SERVER", "")
	t.Setenv("PBS_HOME", home)
	if d, fb := DefaultServer(), FallbackServer(); d != "vm" || fb != "fb:15005" {
		t.Errorf("DefaultServer, FallbackServer = %q, %q", d, fb)
	}
}
