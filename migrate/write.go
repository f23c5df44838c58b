package migrate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopbs/migrate/torque"
	"gopbs/server/importdb"
	"gopbs/server/store"
)

// writer writes the GoPBS home and remembers what it created, so that a
// failure part-way can remove it again.
type writer struct {
	created []string // files and directories, in creation order
}

// undo removes what the writer created, newest first.
func (w *writer) undo() {
	for i := len(w.created) - 1; i >= 0; i-- {
		os.RemoveAll(w.created[i])
	}
}

func (w *writer) mkdir(dir string, mode fs.FileMode) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := w.mkdir(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	w.created = append(w.created, dir)
	return nil
}

// create writes a new file (never over an existing one) and syncs it.
func (w *writer) create(path string, mode fs.FileMode, content func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	w.created = append(w.created, path)
	err = content(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// write writes the database (and, for another directory than from, the
// files a GoPBS home needs beside it). The database appears last, by a
// hard link that fails if one exists, so that a home holds a complete
// import or none.
func (w *writer) write(db *importdb.Database, h *torque.Home, from, to string, same bool) error {
	priv := filepath.Join(to, "server_priv")
	if err := w.mkdir(priv, 0o750); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(priv, ".import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	st, err := store.OpenBolt(filepath.Join(tmp, "serverdb.bolt"))
	if err != nil {
		return err
	}
	if err := st.Apply(db.Ops()...); err != nil {
		st.Close()
		return fmt.Errorf("write database: %w", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	if !same {
		if err := w.homeFiles(db, h, from, to); err != nil {
			return err
		}
	}
	final := filepath.Join(to, DatabaseFile)
	if err := os.Link(filepath.Join(tmp, "serverdb.bolt"), final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s %w", final, ErrImported)
		}
		return err
	}
	return syncDir(priv)
}

// homeFiles writes server_name, server_priv/nodes and a copy of the
// accounting files into a home other than the TORQUE one; files already
// there are left alone.
func (w *writer) homeFiles(db *importdb.Database, h *torque.Home, from, to string) error {
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if p := filepath.Join(to, "server_name"); h.ServerName != "" && !exists(p) {
		if err := w.create(p, 0o644, func(f io.Writer) error {
			_, err := io.WriteString(f, h.ServerName+"\n")
			return err
		}); err != nil {
			return err
		}
	}
	if lines := db.NodeLines(); len(lines) > 0 {
		if p := filepath.Join(to, "server_priv", "nodes"); !exists(p) {
			if err := w.create(p, 0o644, func(f io.Writer) error {
				_, err := io.WriteString(f, strings.Join(lines, "\n")+"\n")
				return err
			}); err != nil {
				return err
			}
		}
	}
	src := filepath.Join(from, "server_priv", "accounting")
	ents, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dst := filepath.Join(to, "server_priv", "accounting")
	if err := w.mkdir(dst, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || exists(filepath.Join(dst, e.Name())) {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		err = w.create(filepath.Join(dst, e.Name()), 0o644, func(f io.Writer) error {
			_, err := io.Copy(f, in)
			return err
		})
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
