// Package capturetest finds the shared TORQUE captures for tests: each
// helper skips the test when the captures are absent (a checkout without
// ../shared) and fails it when they cannot be read.
package capturetest

import (
	"path/filepath"
	"testing"

	"gopbs/internal/capture"
)

// Dir returns the shared capture directory (see capture.SharedDir), or
// skips the test when there is none.
func Dir(t testing.TB) string {
	t.Helper()
	dir, ok := capture.SharedDir()
	if !ok {
		t.Skip("shared captures (../shared/captures beside the module root) not available")
	}
	return dir
}

// PcapFiles returns the sorted paths of the capture files in Dir. It skips
// the test as Dir does and fails it when the directory holds none.
func PcapFiles(t testing.TB) []string {
	t.Helper()
	return pcapFilesIn(t, Dir(t))
}

func pcapFilesIn(t testing.TB, dir string) []string {
	t.Helper()
	files, err := capture.PcapFiles(dir)
	if err != nil {
		t.Fatalf("captures in %s: %v", dir, err)
	}
	if len(files) == 0 {
		t.Fatalf("no captures (*.pcap) in %s", dir)
	}
	return files
}

// Read reads the capture file called name in Dir. It skips the test as
// Dir does and fails it when the file cannot be read.
func Read(t testing.TB, name string) *capture.Capture {
	t.Helper()
	c, err := capture.ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Scenario returns the manifest entry of scenario id and its capture. It
// skips the test as Dir does, or when the manifest has no scenario id,
// and fails it when the manifest or the capture cannot be read.
func Scenario(t testing.TB, id int) (*capture.Scenario, *capture.Capture) {
	t.Helper()
	dir := Dir(t)
	scenarios, err := capture.ReadManifest(filepath.Join(dir, capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range scenarios {
		if scenarios[i].ID == id {
			return &scenarios[i], Read(t, scenarios[i].Pcap)
		}
	}
	t.Skipf("the manifest has no scenario %d", id)
	return nil, nil
}
