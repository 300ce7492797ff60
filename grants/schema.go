package grants

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The config's keys are checked against the Config type itself, by its toml
// tags, exactly (case-sensitive): the TOML decoder and viper both match
// keys case-insensitively, so "PROFILE" after "profile" would otherwise win
// and "[Sandbox] Required = false" would be honoured. The same walk checks
// every value's TOML type, in TOML's words, and records the line of every
// key so later checks can say where a bad value was written.

// keyLines maps a dotted key path ("approval.timeout_seconds",
// "rules.allow[0].target.path") to the line it was written on.
type keyLines map[string]int

// line returns the line of key, or of its closest enclosing key written in
// the file; 0 when none is known.
func (l keyLines) line(key string) int {
	for k := key; k != ""; {
		if n, ok := l[k]; ok {
			return n
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			return 0
		}
		k = k[:i]
	}
	return 0
}

var configType = reflect.TypeFor[Config]()

// checkSchema walks the TOML document: every key must be one the Config
// type declares, spelled exactly, holding a value of its type. It returns
// the line of every key.
func checkSchema(data []byte, file string) (keyLines, error) {
	lines := keyLines{}
	var p unstable.Parser
	p.Reset(data)
	// Line numbers from byte offsets through an index of the newlines
	// (the parser's Shape scans from the start for every node).
	var newlines []int
	for i, c := range data {
		if c == '\n' {
			newlines = append(newlines, i)
		}
	}
	lineOf := func(n *unstable.Node) int {
		if n == nil || n.Raw.Length == 0 && n.Raw.Offset == 0 {
			return 0
		}
		return sort.SearchInts(newlines, int(n.Raw.Offset)) + 1
	}
	bad := func(key string, line int, msg string) error {
		return &ConfigError{File: file, Line: line, Key: key, Msg: msg}
	}
	arrayCount := map[string]int{}
	headers := map[string]int{} // table headers seen, by path
	table, tableType := "", configType
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first := keyParts(e)
			line := lineOf(first)
			path, t, err := resolveKey("", configType, parts, lines, line)
			if err != nil {
				return nil, bad(err.key, line, err.msg)
			}
			if e.Kind == unstable.ArrayTable {
				if t.Kind() != reflect.Slice || elem(t.Elem()).Kind() != reflect.Struct {
					return nil, bad(path, line, fmt.Sprintf("is not a list of tables; write [%s], not [[%s]]", path, path))
				}
				i := arrayCount[path]
				arrayCount[path]++
				path = fmt.Sprintf("%s[%d]", path, i)
				t = t.Elem()
			} else if t.Kind() == reflect.Slice && elem(t.Elem()).Kind() == reflect.Struct {
				return nil, bad(path, line, fmt.Sprintf("is a list of tables: start each entry with [[%s]]", path))
			} else if k := elem(t).Kind(); k != reflect.Struct && k != reflect.Map {
				return nil, bad(path, line, fmt.Sprintf("is a value, not a table: write %s = …", parts[len(parts)-1]))
			}
			if first, dup := headers[path]; dup {
				return nil, bad(path, line, fmt.Sprintf("the table is defined twice (first on line %d); merge the two", first))
			}
			headers[path] = line
			lines[path] = line
			table, tableType = path, elem(t)
		case unstable.KeyValue:
			if err := checkKeyValue(table, tableType, e, lines, lineOf); err != nil {
				return nil, bad(err.key, err.line, err.msg)
			}
		}
	}
	if err := p.Error(); err != nil {
		// The TOML decoder has reported syntax errors with their line
		// before this walk runs; this is a backstop.
		line := 0
		if pe, ok := err.(*unstable.ParserError); ok && len(pe.Highlight) > 0 {
			line = p.Shape(p.Range(pe.Highlight)).Start.Line
		}
		return nil, &ConfigError{File: file, Line: line, Msg: "cannot be read as TOML: " + err.Error()}
	}
	return lines, nil
}

type schemaError struct {
	key, msg string
	line     int
}

func keyParts(n *unstable.Node) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	it := n.Key()
	for it.Next() {
		k := it.Node()
		if first == nil {
			first = k
		}
		parts = append(parts, string(k.Data))
	}
	return parts, first
}

func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// resolveKey follows the key parts from the table at base (of type t) and
// returns the dotted path and the type found there. Intermediate parts must
// be tables; an array of tables part stands for its latest element.
func resolveKey(base string, t reflect.Type, parts []string, lines keyLines, line int) (string, reflect.Type, *schemaError) {
	path := base
	for i, part := range parts {
		t = elem(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return "", nil, &schemaError{key: join(path, part), line: line, msg: unknownKeyMsg(part, tagNames(t))}
			}
			path, t = join(path, part), f.Type
		case reflect.Map:
			path, t = join(path, part), t.Elem()
		default:
			return "", nil, &schemaError{key: path, line: line, msg: fmt.Sprintf("is a value, not a table, so it has no key %q", part)}
		}
		// A dotted part through an array of tables ([[rules.allow]] then
		// [rules.allow.target]) names the latest element.
		if i < len(parts)-1 && t.Kind() == reflect.Slice && elem(t.Elem()).Kind() == reflect.Struct {
			n := 0
			for k := range lines {
				if strings.HasPrefix(k, path+"[") && !strings.Contains(k[len(path)+1:], ".") {
					n++
				}
			}
			if n == 0 {
				return "", nil, &schemaError{key: path, line: line, msg: "is a list of tables; start an entry with [[" + path + "]] first"}
			}
			path, t = fmt.Sprintf("%s[%d]", path, n-1), t.Elem()
		}
	}
	return path, t, nil
}

func join(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag := tomlTag(f); tag != "" && tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tomlTag(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" {
		return ""
	}
	return tag
}

func tagNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if tag := tomlTag(t.Field(i)); tag != "" {
			names = append(names, tag)
		}
	}
	return names
}

func unknownKeyMsg(key string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("unknown key %q; keys are case-sensitive: write %q", key, k)
		}
	}
	return fmt.Sprintf("unknown key %q; known here: %s (check config.example.toml)", key, strings.Join(closestFirst(key, known), ", "))
}

func checkKeyValue(table string, t reflect.Type, kv *unstable.Node, lines keyLines, lineOf func(*unstable.Node) int) *schemaError {
	parts, first := keyParts(kv)
	line := lineOf(first)
	path, ft, err := resolveKey(table, t, parts, lines, line)
	if err != nil {
		return err
	}
	if first, dup := lines[path]; dup {
		return &schemaError{key: path, line: line, msg: fmt.Sprintf("is set twice (first on line %d); keep one", first)}
	}
	lines[path] = line
	return checkValue(path, ft, kv.Value(), lines, lineOf, line)
}

// checkValue checks that the TOML value v can be held by a Go value of type t.
func checkValue(path string, t reflect.Type, v *unstable.Node, lines keyLines, lineOf func(*unstable.Node) int, line int) *schemaError {
	wrong := func() *schemaError {
		return &schemaError{key: path, line: line, msg: fmt.Sprintf("want %s, got %s", tomlTypeName(t), describeValue(v))}
	}
	t = elem(t)
	switch t.Kind() {
	case reflect.String:
		if v.Kind != unstable.String {
			return wrong()
		}
	case reflect.Bool:
		if v.Kind != unstable.Bool {
			return wrong()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Kind != unstable.Integer {
			return wrong()
		}
		if _, err := strconv.ParseInt(string(v.Data), 0, t.Bits()); err != nil {
			return &schemaError{key: path, line: line, msg: fmt.Sprintf("%s is out of range for this integer", v.Data)}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Kind != unstable.Integer {
			return wrong()
		}
		if _, err := strconv.ParseUint(strings.TrimPrefix(string(v.Data), "+"), 0, t.Bits()); err != nil {
			return &schemaError{key: path, line: line, msg: fmt.Sprintf("%s is out of range: want an integer from 0 up", v.Data)}
		}
	case reflect.Float32, reflect.Float64:
		if v.Kind != unstable.Float && v.Kind != unstable.Integer {
			return wrong()
		}
	case reflect.Slice:
		if v.Kind != unstable.Array {
			return wrong()
		}
		it := v.Children()
		for i := 0; it.Next(); i++ {
			el := it.Node()
			if err := checkValue(fmt.Sprintf("%s[%d]", path, i), t.Elem(), el, lines, lineOf, max(lineOf(el), line)); err != nil {
				if err.key == fmt.Sprintf("%s[%d]", path, i) && !strings.Contains(err.msg, "unknown key") {
					err.key = path
					err.msg = fmt.Sprintf("want %s, got %s as item %d", tomlTypeName(t), describeValue(el), i+1)
				}
				return err
			}
		}
	case reflect.Struct, reflect.Map:
		if v.Kind != unstable.InlineTable {
			return wrong()
		}
		it := v.Children()
		for it.Next() {
			if err := checkKeyValue(path, t, it.Node(), lines, lineOf); err != nil {
				return err
			}
		}
	}
	return nil
}

// tomlTypeName names the TOML type a Go type holds, in the config's words.
func tomlTypeName(t reflect.Type) string {
	t = elem(t)
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		switch elem(t.Elem()).Kind() {
		case reflect.String:
			return "a list of strings"
		case reflect.Struct:
			return "a list of tables"
		}
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a table"
	}
	return "a value"
}

// describeValue says what a TOML value is, with the value when short.
func describeValue(v *unstable.Node) string {
	show := func(s string) string {
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return s
	}
	switch v.Kind {
	case unstable.String:
		return fmt.Sprintf("a string %q", show(string(v.Data)))
	case unstable.Integer:
		return "an integer " + show(string(v.Data))
	case unstable.Float:
		return "a number with a fraction " + show(string(v.Data))
	case unstable.Bool:
		return "a boolean " + string(v.Data)
	case unstable.Array:
		return "a list"
	case unstable.InlineTable:
		return "a table"
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return "a date or time " + show(string(v.Data))
	}
	return "a " + strings.ToLower(v.Kind.String())
}
