// Drives the simulated engine's /v1/responses with the official OpenAI Node
// SDK, unchanged, and prints what the SDK saw as one JSON object for
// engine/sim/sdk_responses_test.go. Usage: node responses.mjs BASE_URL
import OpenAI from "openai";

const baseURL = process.argv[2];
const client = new OpenAI({ baseURL, apiKey: "not-needed", maxRetries: 0 });
const out = { stream: {}, tool: {}, whole: {}, error: {} };

// Streaming: every event as the SDK typed it.
const stream = await client.responses.create({
  model: "llmbench-sim",
  input: [{ role: "user", content: "one two three four five" }],
  stream: true,
  max_output_tokens: 7,
  // Extra body fields ride along unchanged.
  ignore_eos: true,
  request_id: "node-resp-1",
});
const s = { types: [], seq: [], reasoning: "", text: "", done: "", final: null };
for await (const ev of stream) {
  s.types.push(ev.type);
  s.seq.push(ev.sequence_number);
  if (ev.type === "response.reasoning_text.delta") s.reasoning += ev.delta;
  if (ev.type === "response.output_text.delta") s.text += ev.delta;
  if (ev.type === "response.output_text.done") s.done = ev.text;
  if (ev.type === "response.completed" || ev.type === "response.incomplete") {
    s.final = { id: ev.response.id, status: ev.response.status, reason: ev.response.incomplete_details?.reason ?? null,
      usage: ev.response.usage, outputText: ev.response.output_text ?? null };
  }
}
out.stream = s;

// A function call, streamed: the SDK's own accumulation (stream helper).
const tool = client.responses.stream({
  model: "llmbench-sim",
  input: "the weather in Paris",
  max_output_tokens: 12,
  tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }],
  request_id: "node-resp-tool",
});
const args = [];
tool.on("response.function_call_arguments.delta", (ev) => args.push(ev.delta));
const final = await tool.finalResponse();
const call = final.output.find((o) => o.type === "function_call");
out.tool = { deltas: args.length, joined: args.join(""), name: call?.name ?? null, arguments: call?.arguments ?? null, status: final.status };

// Non-streaming: output_text is the SDK's own join of the message's text.
const whole = await client.responses.create({
  model: "llmbench-sim",
  input: "hello there",
  max_output_tokens: 4,
  request_id: "node-resp-whole",
});
out.whole = { id: whole.id, object: whole.object, status: whole.status, outputText: whole.output_text, usage: whole.usage };

// An error in OpenAI's shape.
try {
  await client.responses.create({ model: "llmbench-sim", input: [] });
  out.error = { thrown: false };
} catch (e) {
  out.error = { thrown: true, status: e.status, message: e.message, isAPIError: e instanceof OpenAI.APIError };
}

console.log(JSON.stringify(out));
