package agenttest

import "encoding/json"

// shellNames are the shell tools of the CLIs: Claude Code's Bash, Codex's
// shell, shell_command and exec_command, Qwen Code's run_shell_command.
var shellNames = []string{"Bash", "run_shell_command", "shell", "shell_command", "exec_command", "container.exec"}

// shellTool is the client's shell tool as its request declares it.
type shellTool struct {
	name   string
	local  bool           // a Responses "local_shell" tool (no schema)
	schema map[string]any // JSON schema of the arguments
	fixed  map[string]any // the arguments of a scripted call of another tool (Answer.Tool)
}

// args returns the tool's arguments running command: the command goes in
// "command" (a string, or an argv ["bash", "-lc", command] where the schema
// wants an array) or "cmd"; other required properties get their type's
// zero value.
func (t *shellTool) args(command string) map[string]any {
	if t.fixed != nil {
		return t.fixed
	}
	props, _ := t.schema["properties"].(map[string]any)
	out := map[string]any{}
	key := "command"
	if _, ok := props["command"]; !ok {
		if _, ok := props["cmd"]; ok {
			key = "cmd"
		}
	}
	if p, _ := props[key].(map[string]any); p != nil && p["type"] == "array" {
		out[key] = []string{"bash", "-lc", command}
	} else {
		out[key] = command
	}
	req, _ := t.schema["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, done := out[name]; done || name == "" {
			continue
		}
		p, _ := props[name].(map[string]any)
		out[name] = zeroOf(name, p)
	}
	return out
}

func zeroOf(name string, p map[string]any) any {
	switch p["type"] {
	case "boolean":
		return false
	case "integer", "number":
		return 0
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	if name == "description" {
		return "Run the scripted command"
	}
	return ""
}

// findShell returns the shell tool among a request's tools, nil when none.
// Each element is normalised to name, type and schema by the caller's
// format.
func findShell(tools []map[string]any, format string) *shellTool {
	byName := map[string]*shellTool{}
	for _, t := range tools {
		var name string
		var schema map[string]any
		switch format {
		case "chat":
			fn, _ := t["function"].(map[string]any)
			name, _ = fn["name"].(string)
			schema, _ = fn["parameters"].(map[string]any)
		case "responses":
			if t["type"] == "local_shell" {
				byName["local_shell"] = &shellTool{name: "local_shell", local: true}
				continue
			}
			if t["type"] != "function" {
				continue
			}
			name, _ = t["name"].(string)
			schema, _ = t["parameters"].(map[string]any)
		default:
			name, _ = t["name"].(string)
			schema, _ = t["input_schema"].(map[string]any)
		}
		byName[name] = &shellTool{name: name, schema: schema}
	}
	for _, n := range shellNames {
		if t := byName[n]; t != nil {
			return t
		}
	}
	if t := byName["local_shell"]; t != nil {
		return t
	}
	return nil
}

// decode reads what the stand-in needs from a completion request.
func decode(format string, raw map[string]any, body []byte) request {
	r := request{text: string(body)}
	r.model, _ = raw["model"].(string)
	r.stream, _ = raw["stream"].(bool)
	if so, ok := raw["stream_options"].(map[string]any); ok {
		r.usage, _ = so["include_usage"].(bool)
	}
	r.tool = findShell(objects(raw["tools"]), format)
	switch format {
	case "chat":
		for _, m := range objects(raw["messages"]) {
			if m["role"] == "tool" {
				r.step++
			}
		}
	case "responses":
		for _, it := range objects(raw["input"]) {
			switch it["type"] {
			case "function_call_output", "local_shell_call_output", "custom_tool_call_output":
				r.step++
			}
		}
	default:
		for _, m := range objects(raw["messages"]) {
			if m["role"] != "user" {
				continue
			}
			for _, b := range objects(m["content"]) {
				if b["type"] == "tool_result" {
					r.step++
				}
			}
		}
	}
	return r
}

func objects(v any) []map[string]any {
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// argsJSON encodes a tool's arguments with sorted keys (encoding/json sorts
// map keys), the text the formats carry as a string.
func argsJSON(t *shellTool, command string) string {
	b, _ := json.Marshal(t.args(command))
	return string(b)
}
