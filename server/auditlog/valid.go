package auditlog

import "encoding/json"

// validJSON is json.Valid(b), exactly: quickJSON answers for the records
// this package writes (one object, strings, integers, a few nested values),
// and anything it does not vouch for is left to json.Valid. Every writer
// on a shared log checks every record the others append, and json.Valid's
// byte-by-byte state machine was about half of following them.
func validJSON(b []byte) bool {
	return quickJSON(b) || json.Valid(b)
}

// quickMaxDepth bounds the nesting quickJSON follows; deeper input goes
// to json.Valid (whose own limit is 10,000).
const quickMaxDepth = 64

// quickJSON reports true only for input json.Valid accepts (FuzzQuickJSON
// checks that); false means "not vouched for", not "invalid". It accepts
// one value with optional surrounding JSON whitespace, the grammar of RFC
// 8259 as encoding/json reads it: any byte from 0x20 up in a string but
// '"' and '\\' (bytes that are not UTF-8 included), the escapes
// \" \\ \/ \b \f \n \r \t \uXXXX, numbers without leading zeros.
func quickJSON(b []byte) bool {
	var stack [quickMaxDepth]byte // '{' or '[' of each open container
	depth := 0
	i := skipSpace(b, 0)
	for {
		// A value at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth == quickMaxDepth {
				return false
			}
			stack[depth] = c
			depth++
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				depth--
				i++
				break
			}
			if c == '{' {
				if i = quickKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = quickString(b, i); i < 0 {
				return false
			}
		case c == '-' || '0' <= c && c <= '9':
			if i = quickNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = quickLiteral(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = quickLiteral(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = quickLiteral(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: a comma, the end of containers, or the end.
		for {
			i = skipSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			open := stack[depth-1]
			if b[i] == open+2 {
				depth--
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = skipSpace(b, i+1)
			if open == '{' {
				if i = quickKey(b, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// quickKey reads `"key" :` and the space after it at b[i]; it returns
// where the value starts, or -1.
func quickKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = quickString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// plainByte marks the string bytes that need no look: 0x20 and up, but
// '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// quickString reads the string at b[i] (a '"'); it returns the index after
// its closing quote, or -1.
func quickString(b []byte, i int) int {
	for i++; i < len(b); {
		c := b[i]
		if plainByte[c] {
			i++
			continue
		}
		switch c {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default: // a control byte
			return -1
		}
	}
	return -1
}

// quickNumber reads the number at b[i]; it returns the index after it, or
// -1.
func quickNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digitsFrom(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digitsFrom(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digitsFrom(b, i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

func digitsFrom(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func quickLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipSpace skips JSON whitespace from b[i].
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
