package workload

import "github.com/llmbench-org/llmbench/scenarios"

// defaultOutputTokens is the output length of a file record that gives none.
const defaultOutputTokens = scenarios.DefaultOutputTokens

// dataset makes the messages and token targets of request i of a run. It is
// pure and safe for concurrent use: request i depends on the seed and i only.
type dataset interface {
	request(i int) (msgs []Message, promptTokens, maxTokens int)
}

var (
	_ dataset = synthetic{}
	_ dataset = (*sharedPrefix)(nil)
	_ dataset = multiTurn{}
	_ dataset = (*records)(nil)
	_ dataset = (*traceRows)(nil)
)

// synthetic is one user message of a drawn number of words.
type synthetic struct {
	seed           int64
	prompt, output lengthDist
}

func (s synthetic) request(i int) ([]Message, int, int) {
	rng := newRand(s.seed, streamRequest, uint64(i))
	p := s.prompt.draw(rng)
	o := s.output.draw(rng)
	return []Message{{Role: "user", Content: words(rng, p)}}, p, o
}

// sharedPrefix is SGLang's generated-shared-prefix workload: groups × perGroup
// distinct prompts; every prompt of a group starts with the group's system
// prompt of prefixTokens words. Request i is prompt i mod (groups × perGroup),
// taken round-robin across groups (group i mod groups) so consecutive
// requests hit different prefixes; after the last prompt the cycle repeats.
type sharedPrefix struct {
	seed             int64
	groups, perGroup int
	prefixTokens     int
	question, output lengthDist
	prefixes         []string // the system prompt of each group
}

func newSharedPrefix(seed int64, groups, perGroup, prefixTokens int, question, output lengthDist) *sharedPrefix {
	sp := &sharedPrefix{seed: seed, groups: groups, perGroup: perGroup, prefixTokens: prefixTokens, question: question, output: output}
	for g := range groups {
		sp.prefixes = append(sp.prefixes, words(newRand(seed, streamPrefix, uint64(g)), prefixTokens))
	}
	return sp
}

func (sp *sharedPrefix) request(i int) ([]Message, int, int) {
	k := i % (sp.groups * sp.perGroup)
	rng := newRand(sp.seed, streamQuestion, uint64(k))
	q := sp.question.draw(rng)
	o := sp.output.draw(rng)
	msgs := []Message{
		{Role: "system", Content: sp.prefixes[k%sp.groups]},
		{Role: "user", Content: words(rng, q)},
	}
	return msgs, sp.prefixTokens + q, o
}

// multiTurn is conversations of turns requests each: request i is turn
// i mod turns of conversation i / turns, and carries the whole history before
// it. The assistant turns of the history are the planned replies (as many
// words as the reply's max_tokens), standing in for what the model said, so
// the plan stays deterministic. Every conversation opens with the same system
// prompt of systemTokens words (none when 0).
type multiTurn struct {
	seed         int64
	turns        int
	systemTokens int
	user, reply  lengthDist
	system       string
}

func newMultiTurn(seed int64, turns, systemTokens int, user, reply lengthDist) multiTurn {
	mt := multiTurn{seed: seed, turns: turns, systemTokens: systemTokens, user: user, reply: reply}
	if systemTokens > 0 {
		mt.system = words(newRand(seed, streamSystem, 0), systemTokens)
	}
	return mt
}

func (mt multiTurn) request(i int) ([]Message, int, int) {
	conv, turn := i/mt.turns, i%mt.turns
	var msgs []Message
	tokens := 0
	if mt.systemTokens > 0 {
		msgs = append(msgs, Message{Role: "system", Content: mt.system})
		tokens += mt.systemTokens
	}
	maxTokens := 0
	for t := 0; t <= turn; t++ {
		rng := newRand(mt.seed, streamTurn, uint64(conv*mt.turns+t))
		u, r := mt.user.draw(rng), mt.reply.draw(rng)
		msgs = append(msgs, Message{Role: "user", Content: words(rng, u)})
		tokens += u
		if t < turn {
			msgs = append(msgs, Message{Role: "assistant", Content: words(rng, r)})
			tokens += r
		} else {
			maxTokens = r
		}
	}
	return msgs, tokens, maxTokens
}

// record is one prompt of a file dataset.
type record struct {
	msgs      []Message
	tokens    int // prompt tokens by the built-in engine's count
	maxTokens int // 0: not given by the file
	// images: the files its row names, and the row's line (jsonl), until
	// loadImages reads them onto the last message.
	images    []string
	imageLine int
}

// records is a file dataset (ShareGPT, JSONL): request i is record
// order[i mod n]. The output length is the file's, or drawn from output when
// the scenario sets one (or the file has none).
type records struct {
	seed   int64
	list   []record
	order  []int
	output lengthDist // nil: the file's lengths
}

func newRecords(seed int64, list []record, shuffle bool, output lengthDist) *records {
	r := &records{seed: seed, list: list, order: make([]int, len(list)), output: output}
	for i := range r.order {
		r.order[i] = i
	}
	if shuffle {
		rng := newRand(seed, streamShuffle, 0)
		rng.Shuffle(len(r.order), func(i, j int) { r.order[i], r.order[j] = r.order[j], r.order[i] })
	}
	return r
}

func (r *records) request(i int) ([]Message, int, int) {
	rec := r.list[r.order[i%len(r.order)]]
	maxTokens := rec.maxTokens
	if r.output != nil || maxTokens == 0 {
		out := r.output
		if out == nil {
			out = fixedLength(defaultOutputTokens)
		}
		maxTokens = out.draw(newRand(r.seed, streamRequest, uint64(i)))
	}
	return cloneMessages(rec.msgs), rec.tokens, maxTokens
}

// cloneMessages keeps callers from sharing the dataset's slices.
func cloneMessages(msgs []Message) []Message { return append([]Message(nil), msgs...) }
