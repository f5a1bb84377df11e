package profile

import (
	"encoding/json"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// maxYAMLNodes bounds the nodes visited when converting a YAML document,
// aliases expanded: a profile is small, and a document of nested aliases
// must not expand without end.
const maxYAMLNodes = 100_000

// yamlToJSON converts one YAML document to JSON. It parses into a
// yaml.Node tree and converts that itself rather than letting yaml.v3
// decode into a map: yaml.v3's own check for duplicate keys is quadratic
// in the number of keys, and a profile parser must stay fast on any
// input. Mapping keys must be strings and must not repeat; aliases are
// followed, within a budget, and a cycle of aliases is an error.
func yamlToJSON(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	c := converter{expanding: map[*yaml.Node]bool{}}
	v, err := c.convert(&root)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("the document is empty")
	}
	return json.Marshal(v)
}

type converter struct {
	visited   int
	expanding map[*yaml.Node]bool // anchors being expanded, for cycles
}

func (c *converter) convert(n *yaml.Node) (any, error) {
	c.visited++
	if c.visited > maxYAMLNodes {
		return nil, fmt.Errorf("the document has more than %d nodes (aliases expanded)", maxYAMLNodes)
	}
	switch n.Kind {
	case 0:
		return nil, nil // an empty document
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.convert(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil || c.expanding[n.Alias] {
			return nil, fmt.Errorf("line %d: alias *%s refers to itself", n.Line, n.Value)
		}
		c.expanding[n.Alias] = true
		defer delete(c.expanding, n.Alias)
		return c.convert(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := c.convert(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, fmt.Errorf("line %d: keys must be strings", n.Content[i].Line)
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q appears twice", n.Content[i].Line, k.Value)
			}
			v, err := c.convert(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok && (f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308) {
			return nil, fmt.Errorf("line %d: %s is not a number JSON can carry", n.Line, n.Value)
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
