package client

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
)

// Content codings (docs/decisions/0210-content-codings.md). Every request
// says Accept-Encoding: identity: the transport asks for nothing itself
// (internal/httppolicy disables its transparent gzip), and a request with no
// Accept-Encoding at all tells a server or proxy that any coding will do. A
// proxy may compress the response anyway; the body is then decoded here,
// layer by layer, and the record says which coding it came in
// (Record.Wire). Each decoder returns what it has decoded as soon as a read
// of the body brings the end of a compressed block (a flush), so an event's
// time is still taken when the read that completes it returns.

// maxCodings bounds the layers of codings a response may list.
const maxCodings = 3

// bodyBufSize is the buffer between a compressed body and its decoder.
const bodyBufSize = 4 << 10

// encodingError is a response in a content coding llmbench cannot decode.
type encodingError struct {
	coding string
	why    string
}

func (e *encodingError) Error() string {
	return fmt.Sprintf("the response is in content coding %q, which llmbench cannot decode (%s; it asked for identity)", e.coding, e.why)
}

// decodedBody reads a compressed body through its decoders; Close closes the
// body itself.
type decodedBody struct {
	io.Reader
	raw io.ReadCloser
}

func (d *decodedBody) Close() error { return d.raw.Close() }

// codings lists the content codings of h in the order they were applied,
// identity left out, lower case.
func codings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// decodeBody wraps body in the decoders its Content-Encoding names (the
// last applied is undone first). It returns body itself when there is none,
// and the decoders, to be asked what they found once the body was read.
func decodeBody(h http.Header, body io.ReadCloser) (io.ReadCloser, []*lazyDecoder, error) {
	cs := codings(h)
	if len(cs) == 0 {
		return body, nil, nil
	}
	if len(cs) > maxCodings {
		return nil, nil, &encodingError{coding: strings.Join(cs, ", "), why: fmt.Sprintf("more than %d layers", maxCodings)}
	}
	var r io.Reader = body
	decs := make([]*lazyDecoder, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		switch cs[i] {
		case "gzip", "x-gzip", "deflate", "br":
		default:
			return nil, nil, &encodingError{coding: cs[i], why: "it reads gzip, deflate and br"}
		}
		d := &lazyDecoder{src: r, coding: cs[i]}
		decs = append(decs, d)
		r = d
	}
	return &decodedBody{Reader: r, raw: body}, decs, nil
}

// lazyDecoder undoes one coding. It starts its decoder at the first read,
// not when the response arrives: gzip and zlib read their header at once,
// which would wait for the first compressed bytes before the stream is read.
type lazyDecoder struct {
	src    io.Reader
	coding string // as the header names it; "deflate-raw" once deflate proves to be a raw stream
	r      io.Reader
	err    error
}

func (d *lazyDecoder) Read(p []byte) (int, error) {
	if d.r == nil && d.err == nil {
		d.r, d.err = d.start()
	}
	if d.err != nil {
		return 0, d.err
	}
	return d.r.Read(p)
}

func (d *lazyDecoder) start() (io.Reader, error) {
	br := bufio.NewReaderSize(d.src, bodyBufSize)
	switch d.coding {
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("content coding %s: %w", d.coding, err)
		}
		z.Multistream(false)
		return &gzipMembers{br: br, z: z}, nil
	case "deflate":
		// RFC 9110 says deflate is a zlib stream; some servers send raw
		// deflate under the name. A zlib header is told by its check bits.
		head, err := br.Peek(2)
		if err != nil {
			return nil, fmt.Errorf("content coding deflate: %w", err)
		}
		if isZlibHeader(head[0], head[1]) {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("content coding deflate: %w", err)
			}
			return z, nil
		}
		d.coding = "deflate-raw"
		return flate.NewReader(br), nil
	default: // br (decodeBody lets no other name through)
		return brotli.NewReader(br), nil
	}
}

// gzipMembers reads a gzip body of one member or more. gzip.Reader's own
// multistream mode looks for the next member's header in the same Read that
// returns the end of the one before, so the last events of a stream would
// wait for the connection to close (or the request to time out) when the
// server keeps it open; here that look happens in the next Read, after
// those events were handed out.
type gzipMembers struct {
	br    *bufio.Reader
	z     *gzip.Reader
	ended bool // the current member ended
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		if g.ended {
			if _, err := g.br.Peek(1); err != nil {
				return 0, err // io.EOF: the body's end
			}
			if err := g.z.Reset(g.br); err != nil {
				return 0, fmt.Errorf("content coding gzip: %w", err)
			}
			g.z.Multistream(false)
			g.ended = false
		}
		n, err := g.z.Read(p)
		if err == io.EOF {
			g.ended = true
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

// isZlibHeader reports whether two bytes open a zlib stream (RFC 1950): the
// deflate method with a window of at most 32 KiB, and the check bits.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// codingNote names the codings a body came in, as Record.Wire says them.
func codingNote(decs []*lazyDecoder) string {
	names := make([]string, len(decs))
	for i, d := range decs {
		names[len(decs)-1-i] = d.coding // in the order they were applied
	}
	return strings.Join(names, "+")
}
