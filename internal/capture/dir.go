package capture

import (
	"os"
	"path/filepath"
)

// SharedDir returns the directory holding the shared captures: it walks up
// from the working directory to the module root (the first directory with
// a go.mod file) and returns <root>/../shared/captures. The boolean is false
// when there is no module root or no such directory, so tests can skip.
func SharedDir() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	return sharedDirFrom(wd)
}

func sharedDirFrom(dir string) (string, bool) {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	caps := filepath.Join(filepath.Dir(dir), "shared", "captures")
	if fi, err := os.Stat(caps); err != nil || !fi.IsDir() {
		return "", false
	}
	return caps, true
}

// PcapFiles returns the sorted paths of every *.pcap file in dir.
func PcapFiles(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "*.pcap"))
}
