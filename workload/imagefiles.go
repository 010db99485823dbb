package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig reads JPEG headers
	_ "image/png"  // and PNG ones
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/llmbench-org/llmbench/scenarios"
)

// nameImages keeps the image files a jsonl row names, for loadImages.
func (rec *record) nameImages(files []string, line int) error {
	if len(files) > scenarios.MaxImagesPerRequest {
		return fmt.Errorf("images: %d files, want at most %d", len(files), scenarios.MaxImagesPerRequest)
	}
	for i, m := range rec.msgs {
		if len(m.Images) > 0 {
			return fmt.Errorf("messages[%d]: images go in the row's \"images\" list of files, not in a message", i)
		}
	}
	for i, f := range files {
		if strings.TrimSpace(f) == "" {
			return fmt.Errorf("images[%d]: an empty file name", i)
		}
	}
	if len(files) > 0 {
		rec.images, rec.imageLine = files, line
	}
	return nil
}

// loadImages reads the image files of a dataset's records (named relative
// to the dataset file, through the scenario's bounded opener) and puts them
// on each record's last message. Each file is read once, however many rows
// name it, and kept in memory for the run: sending it must not wait on the disk.
func loadImages(list []record, dataset string, open func(string) (io.ReadCloser, error)) (shapes []Image, err error) {
	cache := map[string]Image{}
	seen := map[[2]int]map[string]bool{}
	for k := range list {
		rec := &list[k]
		if len(rec.images) == 0 {
			continue
		}
		ims := make([]Image, len(rec.images))
		for i, name := range rec.images {
			im, ok := cache[name]
			if !ok {
				var err error
				if im, err = readImage(dataset, name, open); err != nil {
					return nil, fmt.Errorf("%s:%d: images[%d]: %w", dataset, rec.imageLine, i, err)
				}
				cache[name] = im
				size := [2]int{im.Width, im.Height}
				if seen[size] == nil {
					seen[size] = map[string]bool{}
				}
				if !seen[size][im.Format] {
					seen[size][im.Format] = true
					shapes = append(shapes, im)
				}
			}
			ims[i] = im
		}
		rec.msgs = cloneMessages(rec.msgs)
		rec.msgs[len(rec.msgs)-1].Images = ims
		rec.images = nil
	}
	return shapes, nil
}

// readImage reads one image file and names it by its path, size, format
// and hash.
func readImage(dataset, name string, open func(string) (io.ReadCloser, error)) (Image, error) {
	file := name
	if !filepath.IsAbs(name) && !path.IsAbs(name) {
		file = filepath.Join(filepath.Dir(dataset), name)
	}
	f, err := open(file)
	if err != nil {
		return Image{}, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return Image{}, err
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, image.ErrFormat) {
			return Image{}, fmt.Errorf("%s: not a PNG or JPEG image", name)
		}
		return Image{}, fmt.Errorf("%s: %w", name, err)
	}
	if format != ImagePNG && format != ImageJPEG {
		return Image{}, fmt.Errorf("%s: a %s image, want PNG or JPEG", name, format)
	}
	sum := sha256.Sum256(data)
	return Image{Width: cfg.Width, Height: cfg.Height, Format: format, Path: name, SHA256: hex.EncodeToString(sum[:]), data: data}, nil
}

// hashImages gives the messages' images their hashes (a plan's preview):
// a copy, the dataset's messages untouched.
func hashImages(msgs []Message) []Message {
	if CountImages(msgs) == 0 {
		return msgs
	}
	msgs = cloneMessages(msgs)
	for k := range msgs {
		if len(msgs[k].Images) == 0 {
			continue
		}
		ims := append([]Image(nil), msgs[k].Images...)
		for i := range ims {
			if h, err := ims[i].withHash(); err == nil {
				ims[i] = h
			}
		}
		msgs[k].Images = ims
	}
	return msgs
}
