package jsonrpc

// Malformed returns a deliberately broken frame of the given class, for
// negative cases that must check how a peer copes with bad input. The bytes
// never contain a newline, so they stay one stdio frame.
func Malformed(class DecodeClass) []byte {
	switch class {
	case ClassParse:
		return []byte(`{"jsonrpc":"2.0","method":"ping","id":`)
	case ClassNotObject:
		return []byte(`"just a string"`)
	case ClassBatch:
		return []byte(`[{"jsonrpc":"2.0","method":"ping","id":1}]`)
	case ClassWrongVersion:
		return []byte(`{"jsonrpc":"1.0","method":"ping","id":1}`)
	case ClassInvalidID:
		return []byte(`{"jsonrpc":"2.0","method":"ping","id":null}`)
	case ClassAmbiguous:
		return []byte(`{"jsonrpc":"2.0","method":"ping","id":1,"result":{}}`)
	case ClassInvalidUTF8:
		return []byte("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}")
	}
	return []byte(`{`)
}
