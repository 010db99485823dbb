package client

// SpreadTokens gives chunks total tokens the way a record whose stream
// carried only a final usage gets them (ChunkTokensUsageTotal): one to each
// choice's first chunk, the rest as evenly as whole tokens allow. A peer's
// result file that keeps chunk times and an output count but not each
// chunk's tokens (vLLM's, SGLang's) is read under the same assumption, so
// the two sides of a comparison spread alike.
func SpreadTokens(chunks []Chunk, total int) {
	if len(chunks) == 0 {
		return
	}
	if total < len(chunks) {
		for i := range chunks {
			chunks[i].Tokens = 1
		}
		return
	}
	spreadTokens(chunks, total)
}
