package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpflight/mcpflight/mcp"
)

// Observer names a tool or a resource of the target whose result reports
// how its handlers ended, so that a case can see what the wire cannot:
// a handler that keeps running after its request was cancelled, or after
// its stream closed, looks on the wire exactly like one that stopped.
// docs/observer.md is the contract.
//
// The observation document is the tool result's structuredContent, or
// when it has none the JSON text of its first text content; for a
// resource, the JSON text of the first content of resources/read. The
// pointers (RFC 6901) locate the counts in it.
type Observer struct {
	// Tool is the observer tool's name; exactly one of Tool and Resource.
	Tool string `json:"tool,omitempty"`
	// Arguments are the observer tool's arguments.
	Arguments map[string]any `json:"arguments,omitempty"`
	// Resource is the observer resource's URI.
	Resource string `json:"resource,omitempty"`
	// Started, Completed and Cancelled point at the numbers of handlers
	// started, ended on their own (with a result or an error) and ended
	// by a cancel, counted across every session since the server
	// started. Required.
	Started   string `json:"started"`
	Completed string `json:"completed"`
	Cancelled string `json:"cancelled"`
	// LastStep, optional, points at the step most recently reached (the
	// count of progress steps done by the operation observed).
	LastStep string `json:"lastStep,omitempty"`
}

// Observation is what one read of an observer reported.
type Observation struct {
	Started, Completed, Cancelled int
	// LastStep is -1 when the profile names no lastStep pointer.
	LastStep int
}

// Running is the number of handlers started and not ended.
func (o Observation) Running() int { return o.Started - o.Completed - o.Cancelled }

// ErrObservation is matched (errors.Is) by every error of Observe: the
// document does not hold what the profile's pointers promise.
var ErrObservation = errors.New("observer")

// validate checks an observer entry; its errors match ErrInvalid.
func (o *Observer) validate() error {
	switch {
	case (o.Tool == "") == (o.Resource == ""):
		return fmt.Errorf("%w: observer: name exactly one of tool and resource", ErrInvalid)
	case o.Resource != "" && len(o.Arguments) > 0:
		return fmt.Errorf("%w: observer: arguments apply to a tool, not to resource %q", ErrInvalid, o.Resource)
	case o.Tool != "" && strings.TrimSpace(o.Tool) == "":
		return fmt.Errorf("%w: observer: the tool name is blank", ErrInvalid)
	}
	for _, f := range []struct {
		field, ptr string
		required   bool
	}{{"started", o.Started, true}, {"completed", o.Completed, true}, {"cancelled", o.Cancelled, true}, {"lastStep", o.LastStep, false}} {
		if f.ptr == "" {
			if f.required {
				return fmt.Errorf("%w: observer: %s needs a JSON pointer to the count (for example \"/%s\")", ErrInvalid, f.field, f.field)
			}
			continue
		}
		if _, err := parsePointer(f.ptr); err != nil {
			return fmt.Errorf("%w: observer: %s: %w", ErrInvalid, f.field, err)
		}
	}
	return nil
}

// Observe reads the counts out of an observation document (see
// Observer). Each must be a non-negative whole number.
func (o *Observer) Observe(doc json.RawMessage) (Observation, error) {
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return Observation{}, fmt.Errorf("%w: the observation is not JSON: %w", ErrObservation, err)
	}
	count := func(field, ptr string) (int, error) {
		v, err := resolvePointer(root, ptr)
		if err != nil {
			return 0, fmt.Errorf("%w: %s (%s): %w", ErrObservation, field, ptr, err)
		}
		f, ok := v.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return 0, fmt.Errorf("%w: %s (%s) is %s, not a count", ErrObservation, field, ptr, describeValue(v))
		}
		return int(f), nil
	}
	var obs Observation
	var err error
	if obs.Started, err = count("started", o.Started); err != nil {
		return Observation{}, err
	}
	if obs.Completed, err = count("completed", o.Completed); err != nil {
		return Observation{}, err
	}
	if obs.Cancelled, err = count("cancelled", o.Cancelled); err != nil {
		return Observation{}, err
	}
	obs.LastStep = -1
	if o.LastStep != "" {
		if obs.LastStep, err = count("lastStep", o.LastStep); err != nil {
			return Observation{}, err
		}
	}
	return obs, nil
}

// parsePointer splits an RFC 6901 JSON pointer into its reference
// tokens: "" is the whole document, otherwise it starts with "/", and
// "~" is only followed by 0 ("~") or 1 ("/").
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q must start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, tok := range tokens {
		for j := 0; j < len(tok); j++ {
			if tok[j] == '~' && (j+1 == len(tok) || (tok[j+1] != '0' && tok[j+1] != '1')) {
				return nil, fmt.Errorf("JSON pointer %q: ~ must be followed by 0 or 1", p)
			}
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// resolvePointer finds what p points at in a decoded JSON document.
func resolvePointer(root any, p string) (any, error) {
	tokens, err := parsePointer(p)
	if err != nil {
		return nil, err
	}
	v := root
	for _, tok := range tokens {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) || (len(tok) > 1 && tok[0] == '0') {
				return nil, fmt.Errorf("no element %q in an array of %d", tok, len(node))
			}
			v = node[i]
		default:
			return nil, fmt.Errorf("%s has no member %q", describeValue(v), tok)
		}
	}
	return v, nil
}

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		return "an array"
	}
	return "an object"
}

// Document returns the observation document of an observer's answer: for
// a tool, result is the tools/call result, and the document is its
// structuredContent, or else the JSON text of its first text content; for
// a resource, result is the resources/read result, and the document is
// the text of its first content. A tool result with isError is an error.
func (o *Observer) Document(result json.RawMessage) (json.RawMessage, error) {
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Contents []struct {
			Text *string `json:"text"`
		} `json:"contents"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("%w: the result is not a JSON object: %w", ErrObservation, err)
	}
	if o.Resource != "" {
		if len(r.Contents) == 0 || r.Contents[0].Text == nil {
			return nil, fmt.Errorf("%w: resource %q has no text content", ErrObservation, o.Resource)
		}
		return json.RawMessage(*r.Contents[0].Text), nil
	}
	switch {
	case r.IsError:
		return nil, fmt.Errorf("%w: tool %q answered with isError", ErrObservation, o.Tool)
	case len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null":
		return r.StructuredContent, nil
	}
	for _, c := range r.Content {
		if c.Type == "text" {
			return json.RawMessage(c.Text), nil
		}
	}
	return nil, fmt.Errorf("%w: tool %q returned neither structuredContent nor text content", ErrObservation, o.Tool)
}

// String renders the counts as evidence lines quote them ("started 3,
// completed 1, cancelled 1"); ParseObservation reads them back, so that a
// reading recorded in a chronology is judged again from the recording.
func (o Observation) String() string {
	return fmt.Sprintf("started %d, completed %d, cancelled %d", o.Started, o.Completed, o.Cancelled)
}

// ParseObservation reads counts String rendered; LastStep is -1.
func ParseObservation(text string) (Observation, error) {
	o := Observation{LastStep: -1}
	if _, err := fmt.Sscanf(text, "started %d, completed %d, cancelled %d", &o.Started, &o.Completed, &o.Cancelled); err != nil {
		return Observation{}, fmt.Errorf("not an observation %q: %w", text, err)
	}
	if o.Started < 0 || o.Completed < 0 || o.Cancelled < 0 {
		return Observation{}, fmt.Errorf("not an observation %q: a negative count", text)
	}
	return o, nil
}

// Request is the request that reads the observer: tools/call of its tool
// with its arguments, or resources/read of its resource.
func (o *Observer) Request() (method string, params map[string]any) {
	if o.Tool != "" {
		args := o.Arguments
		if args == nil {
			args = map[string]any{}
		}
		return mcp.MethodToolsCall, map[string]any{"name": o.Tool, "arguments": args}
	}
	return mcp.MethodResourcesRead, map[string]any{"uri": o.Resource}
}
