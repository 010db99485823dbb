// Drives the simulated engine with the official OpenAI Node SDK, unchanged,
// and prints what the SDK saw as one JSON object for engine/sim/sdk_test.go.
// Usage: node check.mjs BASE_URL
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "not-needed", maxRetries: 0 });
const out = { stream: {}, whole: {}, error: {} };

// Streaming with usage.
const stream = await client.chat.completions.create({
  model: "llmbench-sim",
  messages: [{ role: "user", content: "one two three four five" }],
  stream: true,
  stream_options: { include_usage: true },
  max_tokens: 7,
  // Extra body fields ride along unchanged.
  ignore_eos: true,
  rid: "node-stream-1",
});
const s = { ids: [], roles: [], contents: [], finish: [], usage: null, emptyChoicesWithUsage: false };
for await (const chunk of stream) {
  s.ids.push(chunk.id);
  if (chunk.choices.length === 0 && chunk.usage) {
    s.usage = chunk.usage;
    s.emptyChoicesWithUsage = true;
    continue;
  }
  const c = chunk.choices[0];
  if (c.delta.role) s.roles.push(c.delta.role);
  if (c.delta.content) s.contents.push(c.delta.content);
  if (c.finish_reason) s.finish.push(c.finish_reason);
}
out.stream = s;

// Non-streaming.
const whole = await client.chat.completions.create({
  model: "llmbench-sim",
  messages: [{ role: "user", content: "hello there" }],
  max_completion_tokens: 4,
  rid: "node-whole-1",
});
out.whole = {
  id: whole.id,
  role: whole.choices[0].message.role,
  content: whole.choices[0].message.content,
  finish: whole.choices[0].finish_reason,
  usage: whole.usage,
};

// An error in OpenAI's shape.
try {
  await client.chat.completions.create({ model: "llmbench-sim", messages: [] });
  out.error = { thrown: false };
} catch (e) {
  out.error = { thrown: true, status: e.status, message: e.message, isAPIError: e instanceof OpenAI.APIError };
}

console.log(JSON.stringify(out));
