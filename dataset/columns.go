package dataset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Type is a column type as Arrow (pyarrow, Hugging Face datasets, verl)
// sees it: "string", "int64", "bool", "double", "list<…>" or
// "struct<name type, …>". Nullability is not part of it: pyarrow writes
// every column optional and readers accept either.
type Type struct {
	Kind   string  // string, binary, bool, int32, int64, uint64, float, double, list, struct, map, …
	Elem   *Type   // list element
	Fields []Field // struct fields, in file order
}

// Field is a named struct field or top-level column.
type Field struct {
	Name string
	Type Type
}

// String prints t as the build issue writes types, e.g.
// list<struct<role string, content string>>.
func (t Type) String() string {
	switch t.Kind {
	case "list":
		return "list<" + t.Elem.String() + ">"
	case "struct":
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + f.Type.String()
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	}
	return t.Kind
}

// TypeOf returns the Arrow view of a parquet node.
func TypeOf(n parquet.Node) Type {
	if n.Repeated() {
		// A bare repeated field (legacy two-level list) is a list of itself.
		e := typeOf(n)
		return Type{Kind: "list", Elem: &e}
	}
	return typeOf(n)
}

func typeOf(n parquet.Node) Type {
	if n.Leaf() {
		return leafType(n.Type())
	}
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	ct := n.Type().ConvertedType()
	switch {
	case isList(lt, ct):
		return listType(n)
	case isMap(lt, ct):
		return Type{Kind: "map"}
	}
	t := Type{Kind: "struct"}
	for _, f := range n.Fields() {
		t.Fields = append(t.Fields, Field{Name: f.Name(), Type: TypeOf(f)})
	}
	return t
}

func isList(lt format.LogicalTypeValue, ct *deprecated.ConvertedType) bool {
	_, ok := lt.(*format.ListType)
	return ok || (ct != nil && *ct == deprecated.List)
}

func isMap(lt format.LogicalTypeValue, ct *deprecated.ConvertedType) bool {
	_, ok := lt.(*format.MapType)
	return ok || (ct != nil && (*ct == deprecated.Map || *ct == deprecated.MapKeyValue))
}

// listType reads a LIST-annotated group: the standard three levels
// (group (LIST) { repeated group list { element } }) or the legacy two
// (group (LIST) { repeated element }).
func listType(n parquet.Node) Type {
	fields := n.Fields()
	if len(fields) != 1 {
		return Type{Kind: "invalid list"}
	}
	rep := fields[0]
	var elem Type
	switch {
	case rep.Leaf():
		elem = leafType(rep.Type())
	case len(rep.Fields()) == 1 && rep.Name() != "array" && !strings.HasSuffix(rep.Name(), "_tuple"):
		elem = TypeOf(rep.Fields()[0])
	default:
		elem = typeOf(rep)
	}
	return Type{Kind: "list", Elem: &elem}
}

func leafType(t parquet.Type) Type {
	var lt format.LogicalTypeValue
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	ct := t.ConvertedType()
	switch t.Kind() {
	case parquet.Boolean:
		return Type{Kind: "bool"}
	case parquet.Int32, parquet.Int64:
		return Type{Kind: intKind(t.Kind(), lt)}
	case parquet.Int96:
		return Type{Kind: "timestamp[ns]"}
	case parquet.Float:
		return Type{Kind: "float"}
	case parquet.Double:
		return Type{Kind: "double"}
	case parquet.ByteArray:
		switch lt.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return Type{Kind: "string"}
		}
		if ct != nil && (*ct == deprecated.UTF8 || *ct == deprecated.Enum || *ct == deprecated.Json) {
			return Type{Kind: "string"}
		}
		return Type{Kind: "binary"}
	}
	return Type{Kind: "fixed_size_binary"}
}

func intKind(k parquet.Kind, lt format.LogicalTypeValue) string {
	switch v := lt.(type) {
	case *format.IntType:
		if v.IsSigned {
			return fmt.Sprintf("int%d", v.BitWidth)
		}
		return fmt.Sprintf("uint%d", v.BitWidth)
	case *format.DateType:
		return "date32"
	case *format.TimestampType:
		return "timestamp"
	case *format.TimeType:
		return "time"
	case *format.DecimalType:
		return "decimal"
	}
	if k == parquet.Int32 {
		return "int32"
	}
	return "int64"
}

// Mismatch is one difference between a file's schema and the expected one.
type Mismatch struct {
	// Path is the dotted column path, e.g. extra_info.per_turn_tokens.
	Path string
	// Missing is set when the column is absent; Extra when the file has a
	// column the schema does not.
	Missing, Extra bool
	// Optional is set on a Missing column that readers do without
	// (OptionalColumns).
	Optional  bool
	Want, Got string
}

// Compare lists the differences between got and want, matching struct
// fields by name whatever their order. Extra fields are reported with
// Extra set (readers ignore them).
func Compare(want, got Type) []Mismatch { return compare("", want, got) }

func compare(path string, want, got Type) []Mismatch {
	if want.Kind != got.Kind {
		return []Mismatch{{Path: path, Want: want.String(), Got: got.String()}}
	}
	switch want.Kind {
	case "list":
		return compare(path+"[]", *want.Elem, *got.Elem)
	case "struct":
		return compareFields(path, want.Fields, got.Fields)
	}
	return nil
}

func compareFields(path string, want, got []Field) []Mismatch {
	var out []Mismatch
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(g Field) bool { return g.Name == w.Name })
		if i < 0 {
			p := join(w.Name)
			out = append(out, Mismatch{Path: p, Missing: true, Optional: OptionalColumns[p], Want: w.Type.String()})
			continue
		}
		out = append(out, compare(join(w.Name), w.Type, got[i].Type)...)
	}
	for _, g := range got {
		if !slices.ContainsFunc(want, func(w Field) bool { return w.Name == g.Name }) {
			out = append(out, Mismatch{Path: join(g.Name), Extra: true, Got: g.Type.String()})
		}
	}
	return out
}

// OptionalColumns are the columns, by dotted path, that a file may lack:
// added after files were written, they read as their zero value. A file
// without accounting (build and probes before it was recorded) reads as
// probes.AccountingUnknown.
var OptionalColumns = map[string]bool{"accounting": true, "extra_info.accounting": true}

// Fatal reports whether m makes a file unreadable as the schema: a
// missing column that is not optional, or one of another type.
func (m Mismatch) Fatal() bool { return !m.Extra && !(m.Missing && m.Optional) }

// Expected schemas, derived from the row structs build writes: the one
// schema that ReadRL, ReadSFT and validate check files against.
var (
	SFTSchema = TypeOf(parquet.SchemaOf(SFTRow{}))
	RLSchema  = TypeOf(parquet.SchemaOf(RLRow{}))
)
