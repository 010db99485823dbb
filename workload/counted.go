package workload

import "fmt"

// fileRecords is the plan's file dataset (ShareGPT, JSONL), or nil when its
// prompts are synthetic.
func (p *Plan) fileRecords() *records {
	d := p.data
	if fd, ok := d.(fittedData); ok {
		d = fd.inner
	}
	r, _ := d.(*records)
	return r
}

// RealPrompts returns the prompts of a file dataset's records, at most n,
// in the file's order, for the engine's tokenizer to count (their length
// in the plan is a word count until then); nil when the prompts are
// synthetic.
func (p *Plan) RealPrompts(n int) [][]Message {
	r := p.fileRecords()
	if r == nil {
		return nil
	}
	out := make([][]Message, 0, min(n, len(r.list)))
	for _, rec := range r.list[:min(n, len(r.list))] {
		out = append(out, cloneMessages(rec.msgs))
	}
	return out
}

// WithPromptCounts returns the plan with its file records' prompt lengths
// replaced by the engine's counts, in the order of RealPrompts (counts[i] ≤ 0
// keeps record i's word count), so the plan's prompt_tokens is what the
// engine counts. The dataset's description says how many were counted.
func (p *Plan) WithPromptCounts(counts []int) *Plan {
	r := p.fileRecords()
	if r == nil || len(counts) == 0 {
		return p
	}
	list := append([]record(nil), r.list...)
	counted := 0
	for i, n := range counts {
		if i < len(list) && n > 0 {
			list[i].tokens = n
			counted++
		}
	}
	nr := *r
	nr.list = list
	out := *p
	if fd, ok := p.data.(fittedData); ok {
		fd.inner = &nr
		out.data = fd
	} else {
		out.data = &nr
	}
	out.dataDesc = p.dataDesc + fmt.Sprintf("; prompt lengths counted by the engine's tokenizer (%d of %d records)", counted, len(list))
	return &out
}
