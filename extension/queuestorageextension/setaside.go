// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package queuestorageextension // import "github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"
)

const (
	// damagedSuffix ends the name of a file this extension set aside.
	damagedSuffix = ".damaged"
	// backupSuffix ends the name of a file file_storage's recreate set aside.
	backupSuffix = ".backup"
	// lockWait bounds the wait for a locked file: in use, not damaged.
	lockWait = time.Second
)

// setAsideDir is the storage directory.
type setAsideDir struct {
	path   string
	bound  SetAsideConfig
	logger *zap.Logger
	// now is the clock of the names given; time.Now unless a test sets it.
	now func() time.Time
}

// setAsideDamaged renames aside each queue file bbolt cannot open or read.
func (d setAsideDir) setAsideDamaged() {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		// file_storage reports a directory it cannot use itself.
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !isClientFile(name) || isSetAside(name) {
			continue
		}
		path := filepath.Join(d.path, name)
		info, err := e.Info()
		if err != nil || info.Size() == 0 {
			// bbolt makes an empty file a database.
			continue
		}
		cause := readable(path)
		if cause == nil {
			continue
		}
		now := time.Now
		if d.now != nil {
			now = d.now
		}
		aside := fmt.Sprintf("%s.%s%s", path, now().UTC().Format("20060102T150405.000Z"), damagedSuffix)
		if err := os.Rename(path, aside); err != nil {
			d.logger.Error("queue_storage: a queue file cannot be read and cannot be set aside; its exporter will fail to start. Move it away by hand",
				zap.String("file", path), zap.Int64("bytes", info.Size()), zap.NamedError("cause", cause), zap.Error(err))
			continue
		}
		d.logger.Error("queue_storage: a queue file cannot be read; set aside and started anew. The batches it held are not sent",
			zap.String("file", path), zap.Int64("bytes", info.Size()), zap.String("set_aside_as", aside), zap.NamedError("cause", cause))
	}
}

// readable opens path read-only with bbolt and reads every key, turning
// panics and memory faults into an error; a file locked by another is nil.
func readable(path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bbolt: %v", r)
		}
	}()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: lockWait})
	if errors.Is(err, bberrors.ErrTimeout) {
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error {
			return b.ForEach(func(_, _ []byte) error { return nil })
		})
	})
}

// clientPrefixes start file_storage's client file names: only those are
// touched, as the directory may hold others' files.
var clientPrefixes = []string{"receiver_", "processor_", "exporter_", "extension_", "connector_"}

func isClientFile(name string) bool {
	for _, p := range clientPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func isSetAside(name string) bool {
	return strings.HasSuffix(name, damagedSuffix) || strings.HasSuffix(name, backupSuffix)
}

type setAsideFile struct {
	path  string
	bytes int64
	when  time.Time
}

// prune deletes the oldest files set aside beyond the bound.
func (d setAsideDir) prune() {
	files := d.setAside()
	// Newest first: what is kept is a prefix.
	slices.SortFunc(files, func(a, b setAsideFile) int { return b.when.Compare(a.when) })
	var total int64
	for i, f := range files {
		total += f.bytes
		if i < d.bound.MaxFiles && (d.bound.MaxBytes == 0 || total <= d.bound.MaxBytes) {
			continue
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logger.Warn("queue_storage: a damaged queue file set aside cannot be deleted", zap.String("file", f.path), zap.Error(err))
			continue
		}
		d.logger.Info("queue_storage: deleted a damaged queue file set aside, beyond set_aside's bound",
			zap.String("file", f.path), zap.Int64("bytes", f.bytes), zap.Int("max_files", d.bound.MaxFiles), zap.Int64("max_bytes", d.bound.MaxBytes))
	}
}

// setAside lists the files set aside, dated by ctime: a rename sets it, the
// mtime stays the queue's last write.
func (d setAsideDir) setAside() []setAsideFile {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil
	}
	var files []setAsideFile
	for _, e := range entries {
		if !e.Type().IsRegular() || !isClientFile(e.Name()) || !isSetAside(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		when := info.ModTime()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			when = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
		}
		files = append(files, setAsideFile{path: filepath.Join(d.path, e.Name()), bytes: info.Size(), when: when})
	}
	return files
}
