// Package telemetry owns the server's OpenTelemetry traces: one span per
// tool call, a child span per decision, per approval wait and per command
// run, parented from the W3C trace context a client puts in the request's
// params._meta (over HTTP, when _meta has none, from the request's
// traceparent/tracestate headers; with both, _meta wins and the headers'
// context is a span link), and exported to an OTLP/HTTP collector as OTLP
// JSON.
//
// Traces are off unless the host names a collector ([telemetry]
// otlp_endpoint, or the standard OTEL_EXPORTER_OTLP_ENDPOINT /
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables). Off, a nil *Tracer stands
// for it: every method is a nil check, nothing is built, dialled or
// started.
//
// Names follow the OpenTelemetry conventions for MCP servers and GenAI
// guardrails (semantic-conventions-genai, docs/gen-ai/mcp.md and
// docs/gen-ai/gen-ai-security.md, status Development): `tools/call {tool}`
// (kind SERVER) with mcp.method.name, gen_ai.operation.name
// "execute_tool", gen_ai.tool.name, mcp.protocol.version,
// jsonrpc.request.id, network.transport and error.type "tool_error" when
// the result is an error; `run_guardrail onellm-mcp` (kind INTERNAL) per
// decision with gen_ai.guardrail.verdict.type (allow, deny, escalate: what
// the policy said), gen_ai.guardrail.action.type (allow, block, escalate:
// what was enforced), gen_ai.guardrail.verdict.code (the policy's reason
// code), gen_ai.guardrail.security.policy.id (the profile) and
// gen_ai.guardrail.security.policy.rule.id (the rule). What the
// conventions do not name is under onellm.* (the capability, the audited
// reason code, the risk level, the outcome).
//
// Security model: arguments and results are never attributes, events or
// status text — not a path, a command, a URL or an output. A span carries
// only the server's own vocabulary (tool names, capabilities, reason codes,
// rule ids from the host's config, outcomes) and, when the host sets
// [telemetry] hash_arguments, an HMAC-SHA256 of the canonical arguments
// under a per-install key (gen_ai.guardrail.security.content.input.hash,
// "hmac-sha256:<hex>"), so equal calls can be correlated without a
// dictionary attack on their text. The collector is named by the host's
// config or environment only, never by a client; a redirect is not
// followed; a failed export is dropped (no retries), and said on stderr
// once per failure streak. The client's traceparent (in _meta or a
// header) only chooses the parent, a link and the sampling flag; nothing a
// client sends widens what is exported.
package telemetry
