// Drives the simulated engine's Messages API with the official Anthropic
// Node SDK, unchanged, and prints what the SDK saw as one JSON object for
// engine/sim/sdk_test.go (TestAnthropicNodeSDK).
// Usage: node check-anthropic.mjs SERVER_ROOT (the SDK adds /v1/messages)
import Anthropic from "@anthropic-ai/sdk";

const baseURL = process.argv[2];
const client = new Anthropic({ baseURL, apiKey: "not-needed", maxRetries: 0 });
const out = { raw: {}, stream: {}, whole: {}, error: {} };

// The raw events, create({stream: true}).
const events = await client.messages.create({
  model: "llmbench-sim",
  max_tokens: 7,
  system: "be brief",
  messages: [{ role: "user", content: "one two three four five" }],
  stream: true,
  // Extra body fields ride along unchanged.
  ignore_eos: true,
  rid: "node-msg-raw",
});
const raw = { types: [], text: "", thinking: "", id: null, inputTokens: null, outputTokens: null, stopReason: null };
for await (const ev of events) {
  raw.types.push(ev.type);
  if (ev.type === "message_start") {
    raw.id = ev.message.id;
    raw.inputTokens = ev.message.usage.input_tokens;
  }
  if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") raw.text += ev.delta.text;
  if (ev.type === "content_block_delta" && ev.delta.type === "thinking_delta") raw.thinking += ev.delta.thinking;
  if (ev.type === "message_delta") {
    raw.stopReason = ev.delta.stop_reason;
    raw.outputTokens = ev.usage.output_tokens;
  }
}
out.raw = raw;

// The SDK's own accumulation, messages.stream(): it checks the events'
// order and assembles the message (a tool call's input from its JSON
// deltas).
const stream = client.messages.stream({
  model: "llmbench-sim",
  max_tokens: 6,
  messages: [{ role: "user", content: "what is the weather" }],
  tools: [{ name: "get_weather", input_schema: { type: "object", properties: { input: { type: "string" } } } }],
  ignore_eos: true,
  rid: "node-msg-stream",
});
const texts = [];
stream.on("text", (t) => texts.push(t));
const final = await stream.finalMessage();
out.stream = {
  id: final.id,
  stopReason: final.stop_reason,
  blocks: final.content.map((b) => b.type),
  toolName: final.content.find((b) => b.type === "tool_use")?.name ?? null,
  toolInput: final.content.find((b) => b.type === "tool_use")?.input ?? null,
  usage: final.usage,
  textEvents: texts.length,
};

// Non-streamed.
const whole = await client.messages.create({
  model: "llmbench-sim",
  max_tokens: 4,
  messages: [{ role: "user", content: "hello there" }],
  rid: "node-msg-whole",
});
out.whole = {
  id: whole.id,
  role: whole.role,
  blocks: whole.content.map((b) => b.type),
  text: whole.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
  stopReason: whole.stop_reason,
  usage: whole.usage,
};

// An error in the API's shape.
try {
  await client.messages.create({ model: "llmbench-sim", max_tokens: 4, messages: [] });
  out.error = { thrown: false };
} catch (e) {
  out.error = { thrown: true, status: e.status, type: e.error?.error?.type ?? null, message: e.message, isAPIError: e instanceof Anthropic.APIError };
}

console.log(JSON.stringify(out));
