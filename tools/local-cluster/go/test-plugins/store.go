package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// directoryStore keeps objects as files under <root>/<bucket>/<key>: config "root" names the directory.
type directoryStore struct {
	log  logrus.FieldLogger
	root string
}

func (d *directoryStore) Init(config map[string]string) error {
	for key := range config {
		switch key {
		case "root", "bucket", "prefix", "caCert", "credentialsFile":
		default:
			return fmt.Errorf("config key %q is not known to example.cairn.io/directory (known: root)", key)
		}
	}
	if config["root"] == "" {
		return errors.New("example.cairn.io/directory needs config root: the directory to keep objects in")
	}
	d.root = config["root"]
	return nil
}

func (d *directoryStore) path(bucket, key string) string {
	return filepath.Join(d.root, bucket, filepath.FromSlash(key))
}

func (d *directoryStore) PutObject(bucket, key string, body io.Reader) error {
	target := d.path(bucket, key)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, body); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}

func (d *directoryStore) ObjectExists(bucket, key string) (bool, error) {
	info, err := os.Stat(d.path(bucket, key))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && info.Mode().IsRegular(), err
}

func (d *directoryStore) GetObject(bucket, key string) (io.ReadCloser, error) {
	return os.Open(d.path(bucket, key))
}

// ListCommonPrefixes answers with whole prefixes (the asked prefix included), as Velero's stores do.
func (d *directoryStore) ListCommonPrefixes(bucket, prefix, delimiter string) ([]string, error) {
	keys, err := d.ListObjects(bucket, prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, key := range keys {
		rest := strings.TrimPrefix(key, prefix)
		if i := strings.Index(rest, delimiter); i >= 0 {
			p := prefix + rest[:i+len(delimiter)]
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func (d *directoryStore) ListObjects(bucket, prefix string) ([]string, error) {
	base := filepath.Join(d.root, bucket)
	var keys []string
	err := filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".put-") {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

func (d *directoryStore) DeleteObject(bucket, key string) error {
	err := os.Remove(d.path(bucket, key))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (d *directoryStore) CreateSignedURL(bucket, key string, ttl time.Duration) (string, error) {
	return "", errors.New("example.cairn.io/directory cannot sign URLs")
}
