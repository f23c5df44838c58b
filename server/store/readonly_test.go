package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadOnlyAppliesLogWithoutWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put(Jobs, "7.srv", []byte("seven")), Put(Jobs, "8.srv", []byte("eight")),
		Put(Jobs, "70.srv", []byte("seventy")), Put(Script, "7.srv", []byte("#!/bin/sh\n"))); err != nil {
		t.Fatal(err)
	}

	// While the server holds the database, a reader gives up at once.
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenReadOnly on a held database: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Batches left in the log (a crash) are newer than bbolt; a torn
	// last record was never acknowledged; records of an older generation
	// after them are already in bbolt.
	gen := s.walGen
	log := appendRecord(nil, gen, encodeOps([]Op{Put(Jobs, "7.srv", []byte("held")), Del(Jobs, "8.srv")}))
	log = appendRecord(log, gen, encodeOps([]Op{Put(Jobs, "7.x", []byte("new"))}))
	log = appendRecord(log, gen-1, encodeOps([]Op{Put(Jobs, "70.srv", []byte("stale"))}))
	log = append(log, 0, 0, 0, 40, 1, 2, 3)
	if err := os.WriteFile(path+".wal", log, 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ bucket, key, want string }{
		{Jobs, "7.srv", "held"},
		{Jobs, "8.srv", ""},
		{Jobs, "70.srv", "seventy"},
		{Jobs, "7.x", "new"},
		{Script, "7.srv", "#!/bin/sh\n"},
		{Script, "8.srv", ""},
		{"nosuch", "1", ""},
	} {
		v, err := r.Get(tc.bucket, tc.key)
		if err != nil || string(v) != tc.want || (tc.want == "") != (v == nil) {
			t.Errorf("Get(%s, %s) = %q, %v; want %q", tc.bucket, tc.key, v, err, tc.want)
		}
	}
	for _, tc := range []struct {
		bucket, prefix string
		want           []string
	}{
		{Jobs, "7.", []string{"7.srv", "7.x"}},
		{Jobs, "8.", nil},
		{Jobs, "", []string{"7.srv", "7.x", "70.srv"}},
		{Script, "7", []string{"7.srv"}},
		{"nosuch", "", nil},
	} {
		keys, err := r.Keys(tc.bucket, tc.prefix)
		if err != nil || !slices.Equal(keys, tc.want) {
			t.Errorf("Keys(%s, %q) = %q, %v; want %q", tc.bucket, tc.prefix, keys, err, tc.want)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(path + ".wal")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) || !bytes.Equal(wal, log) {
		t.Fatal("OpenReadOnly modified the database or its log")
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "db")); err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("missing database: %v", err)
	}
}
