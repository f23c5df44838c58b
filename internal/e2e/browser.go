package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Browser is headless Chromium (Debian's chromium package), as the tests
// that check what a person sees of a page use it.
type Browser struct {
	path string
	dir  string // profile directory, removed when the test ends
}

// browserLimit bounds one run of the browser.
const browserLimit = 60 * time.Second

// Chromium returns the headless browser, skipping the test (saying why)
// when chromium is not installed: .ci/run installs it
// (apt-get install chromium).
func Chromium(t testing.TB) *Browser {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return &Browser{path: p, dir: t.TempDir()}
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	return nil
}

// options are the browser's options for every run.
func (b *Browser) options() []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-extensions", "--disable-background-networking",
		"--hide-scrollbars", "--user-data-dir=" + b.dir,
	}
}

// run runs the browser headless on url with extra arguments and returns
// its standard output.
func (b *Browser) run(t testing.TB, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.path, append(append(b.options(), args...), url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, tail(stderr.String(), 20))
	}
	return stdout.Bytes()
}

// Open loads url in a browser left running, as a person leaves a page
// open, until the returned function (or the end of the test) stops it.
func (b *Browser) Open(t testing.TB, url string) (stop func()) {
	t.Helper()
	cmd := exec.Command(b.path, append(b.options(), url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the browser and its helpers
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// DOM loads url and returns the document as the browser built it
// (--dump-dom); args are more of the browser's options, such as
// --virtual-time-budget=MS to let the page run that long first.
func (b *Browser) DOM(t testing.TB, url string, args ...string) string {
	t.Helper()
	return string(b.run(t, url, append([]string{"--dump-dom"}, args...)...))
}

// Screenshot loads url in a window of width×height pixels and returns
// the screenshot, also written to path when path is not "".
func (b *Browser) Screenshot(t testing.TB, url string, width, height int, path string) image.Image {
	t.Helper()
	out := path
	if out == "" {
		out = filepath.Join(t.TempDir(), "screenshot.png")
	}
	b.run(t, url, "--screenshot="+out, fmt.Sprintf("--window-size=%d,%d", width, height))
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("screenshot of %s: %v", url, err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot of %s: %v", url, err)
	}
	return img
}

// CountColor returns the number of pixels of img within tolerance (per
// channel, 0-255) of the colour #rrggbb.
func CountColor(img image.Image, rgb uint32, tolerance int) int {
	wr, wg, wb := int(rgb>>16&0xff), int(rgb>>8&0xff), int(rgb&0xff)
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-wr) <= tolerance && abs(int(g>>8)-wg) <= tolerance && abs(int(b>>8)-wb) <= tolerance {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
