package scrape

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestTargetScrapeContentCoding: a scrape asks for identity, as the measured
// requests do; a proxy that gzips /metrics anyway is decoded (within the
// body bound), and any other coding fails the scrape naming it.
func TestTargetScrapeContentCoding(t *testing.T) {
	t.Parallel()
	text := fixture(t, "sglang.txt")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(text)
	_ = zw.Close()
	bomb := bytes.Buffer{}
	zw = gzip.NewWriter(&bomb)
	_, _ = zw.Write(bytes.Repeat([]byte("# "), (MaxBody+2)/2))
	_ = zw.Close()

	tests := []struct {
		name, coding string
		body         []byte
		wantOK       bool
		wantErr      string
	}{
		{name: "identity", body: text, wantOK: true},
		{name: "gzip although identity was asked", coding: "gzip", body: gz.Bytes(), wantOK: true},
		{name: "x-gzip", coding: "x-gzip", body: gz.Bytes(), wantOK: true},
		{name: "gzip that does not decode", coding: "gzip", body: text, wantErr: "does not decode"},
		{name: "gzip expanding past the body bound", coding: "gzip", body: bomb.Bytes(), wantErr: "body larger than"},
		{name: "br", coding: "br", body: []byte("\x0b\x02\x80hello\x03"), wantErr: `content coding "br"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan string, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case asked <- r.Header.Get("Accept-Encoding"):
				default:
				}
				w.Header().Set("Content-Type", ctText)
				if tc.coding != "" {
					w.Header().Set("Content-Encoding", tc.coding)
				}
				_, _ = w.Write(tc.body)
			}))
			defer srv.Close()
			row := Target{URL: srv.URL, Dialect: "sglang", Timeout: 30 * time.Second}.Scrape(context.Background(), time.Now())
			if got := <-asked; got != "identity" {
				t.Errorf("Accept-Encoding %q, want identity", got)
			}
			if row.OK != tc.wantOK {
				t.Fatalf("OK %v (%s), want %v", row.OK, row.Error, tc.wantOK)
			}
			if tc.wantOK && (row.Snapshot == nil || row.Snapshot.Counters[RequestsFinished] != 320) {
				t.Errorf("snapshot %+v: want the fixture's 320 finished requests", row.Snapshot)
			}
			if !strings.Contains(row.Error, tc.wantErr) {
				t.Errorf("error %q, want it to say %q", row.Error, tc.wantErr)
			}
		})
	}
}
