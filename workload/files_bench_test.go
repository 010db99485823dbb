package workload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// shareGPTOf is a ShareGPT file of n records whose prompts are a few
// thousand words, pretty-printed one record a line as the public sets are.
func shareGPTOf(n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i := range n {
		if i > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, `{"id": "%d", "conversations": [{"from": "human", "value": "%s"}, {"from": "gpt", "value": "%s"}]}`,
			i, strings.Repeat("word ", 1000+i%500), strings.Repeat("reply ", 200))
	}
	buf.WriteString("\n]\n")
	return buf.Bytes()
}

// The datasets are streamed record by record (inputfile.Records keeps the
// bytes since the last mark for error lines): what that costs per MB.
func BenchmarkParseShareGPT(b *testing.B) {
	data := shareGPTOf(2000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := parseShareGPT("f", bytes.NewReader(data), true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJSONL(b *testing.B) {
	var buf bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&buf, "{\"prompt\": \"%s\", \"max_tokens\": %d}\n", strings.Repeat("word ", 1000+i%500), 100+i%50)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseJSONL("f", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
