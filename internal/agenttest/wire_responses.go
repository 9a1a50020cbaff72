package agenttest

import (
	"net/http"
	"time"
)

// OpenAI Responses: input_tokens is the whole request with
// input_tokens_details.cached_tokens inside it; output_tokens holds
// output_tokens_details.reasoning_tokens.

func responsesUsage(u Usage) map[string]any {
	if u.Omitted {
		return nil
	}
	m := map[string]any{
		"input_tokens":          u.Input,
		"input_tokens_details":  map[string]any{"cached_tokens": u.Cached},
		"output_tokens":         u.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens":          u.Input + u.Output,
	}
	if u.Unsplit {
		delete(m, "output_tokens_details")
	}
	return m
}

// responsesItems returns the output items of an answer, complete.
func responsesItems(r reply) []map[string]any {
	a := r.answer
	var items []map[string]any
	if a.Reasoning != "" {
		items = append(items, map[string]any{"id": "rs_" + r.id, "type": "reasoning",
			"summary": []any{map[string]any{"type": "summary_text", "text": a.Reasoning}}})
	}
	if a.Text != "" {
		items = append(items, map[string]any{"id": "msg_" + r.id, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": a.Text, "annotations": []any{}}}})
	}
	if a.Command != "" {
		if r.tool.local {
			items = append(items, map[string]any{"id": "lsh_" + r.id, "type": "local_shell_call", "status": "completed",
				"call_id": "call_" + r.id, "action": map[string]any{"type": "exec", "command": []string{"bash", "-lc", a.Command}}})
		} else {
			items = append(items, map[string]any{"id": "fc_" + r.id, "type": "function_call", "status": "completed",
				"call_id": "call_" + r.id, "name": r.tool.name, "arguments": argsJSON(r.tool, a.Command)})
		}
	}
	return items
}

func responsesObject(r reply, created int64, status string, output []map[string]any, usage any) map[string]any {
	return map[string]any{"id": "resp_" + r.id, "object": "response", "created_at": created, "status": status,
		"model": r.model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil}
}

func writeResponses(w http.ResponseWriter, r reply, stream bool) int {
	created := time.Now().Unix()
	items := responsesItems(r)
	if !stream {
		return writeJSON(w, http.StatusOK, responsesObject(r, created, "completed", items, responsesUsage(r.answer.Usage)))
	}
	s := startSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		s.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": responsesObject(r, created, "in_progress", []map[string]any{}, nil)})
	ev("response.in_progress", map[string]any{"response": responsesObject(r, created, "in_progress", []map[string]any{}, nil)})
	for i, it := range items {
		streamItem(ev, i, it)
	}
	ev("response.completed", map[string]any{"response": responsesObject(r, created, "completed", items, responsesUsage(r.answer.Usage))})
	return http.StatusOK
}

// streamItem writes one output item's events: added, its deltas, done.
func streamItem(ev func(string, map[string]any), i int, it map[string]any) {
	id := it["id"]
	switch it["type"] {
	case "message":
		text := it["content"].([]any)[0].(map[string]any)["text"]
		ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "message",
			"status": "in_progress", "role": "assistant", "content": []any{}}})
		ev("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": text})
		ev("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text})
		ev("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	case "function_call":
		ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "function_call",
			"status": "in_progress", "call_id": it["call_id"], "name": it["name"], "arguments": ""}})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": it["arguments"]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": it["arguments"]})
	case "reasoning":
		text := it["summary"].([]any)[0].(map[string]any)["text"]
		ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
		ev("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
			"part": map[string]any{"type": "summary_text", "text": ""}})
		ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "delta": text})
		ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "text": text})
		ev("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
			"part": map[string]any{"type": "summary_text", "text": text}})
	default:
		ev("response.output_item.added", map[string]any{"output_index": i, "item": it})
	}
	ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
}
