package rollout

import (
	"encoding/json"

	"bagen-data/internal/jsonlex"
)

// unquoteString decodes the JSON string literal v, the whole of v, as
// json.Unmarshal into a string would. Message texts are most of a log's
// bytes, and json.Unmarshal would check the literal's syntax a second time
// (the record it came from was already checked) and go through reflection:
// jsonlex decodes it in a loop over the bytes. A literal with invalid
// UTF-8 (which json.Unmarshal replaces byte by byte) or a malformed one
// goes to json.Unmarshal, which also gives the error.
func unquoteString(v []byte) (string, error) {
	d := jsonlex.Decoder{CheckUTF8: true}
	d.Reset(v)
	s := d.Str()
	d.Finish()
	if d.Err() == nil && d.InvalidUTF8() == 0 {
		return string(s), nil
	}
	var out string
	err := json.Unmarshal(v, &out)
	return out, err
}
