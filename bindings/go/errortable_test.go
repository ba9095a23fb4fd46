package nativeauth

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The library's error codes come from its Swift table, NativeAuthError.Code.table (the source the header,
// docs/errors.md and the Python exceptions are generated against and checked by ErrorTableTests), with each code's
// category turned into an NA_* status by NAStatus.init(_ category:). The Go sentinels must name exactly those codes,
// each with its status; the header's status comments and docs/errors.md are read too, so that a table this test
// misread shows up as a disagreement with them.

var repoRoot = filepath.Join("..", "..")

func readRepo(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatalf("the library's sources are needed for this test: %v", err)
	}
	return string(b)
}

// section returns the text of s from the first occurrence of start up to the first end after it.
func section(t *testing.T, s, start, end, what string) string {
	t.Helper()
	i := strings.Index(s, start)
	if i < 0 {
		t.Fatalf("%s: %q not found", what, start)
	}
	j := strings.Index(s[i:], end)
	if j < 0 {
		t.Fatalf("%s: %q not found after %q", what, end, start)
	}
	return s[i : i+j]
}

// libraryTable returns code → status from the Swift sources.
func libraryTable(t *testing.T) map[string]Status {
	swiftErr := readRepo(t, "Sources/NativeAuthCore/NativeAuthError.swift")
	swiftStatus := readRepo(t, "Sources/NativeAuthCABI/Status.swift")
	unquote := func(s string) string { return strings.Trim(s, "`") }

	// NativeAuthError.Code: `public static let noAccount = Code(rawValue: "no_account")`.
	codeOf := map[string]string{}
	for _, m := range regexp.MustCompile(`public static let (\x60?\w+\x60?) = Code\(rawValue: "([a-z_]+)"\)`).
		FindAllStringSubmatch(swiftErr, -1) {
		codeOf[unquote(m[1])] = m[2]
	}
	// NAStatus's raw values and the category → status switch.
	statusValue := map[string]Status{}
	enum := section(t, swiftStatus, "public enum NAStatus", "public init", "Status.swift")
	for _, m := range regexp.MustCompile(`case (\x60?\w+\x60?) = (-?\d+)`).FindAllStringSubmatch(enum, -1) {
		n, _ := strconv.Atoi(m[2])
		statusValue[unquote(m[1])] = Status(n)
	}
	statusOf := map[string]Status{}
	mapping := section(t, swiftStatus, "public init(_ category: NativeAuthError.Category)", "/// The `NA_*`",
		"Status.swift")
	for _, m := range regexp.MustCompile(`case \.(\w+): self = \.(\w+)`).FindAllStringSubmatch(mapping, -1) {
		v, ok := statusValue[m[2]]
		if !ok {
			t.Fatalf("Status.swift: category %s maps to an unknown status %s", m[1], m[2])
		}
		statusOf[m[1]] = v
	}
	if len(statusValue) < 11 || len(statusOf) < 10 {
		t.Fatalf("Status.swift misread: %v %v", statusValue, statusOf)
	}
	// The table: `(.noAccount, .notFound, "…")` or `(\n .invalidClient, .invalidArgument,\n …)`.
	table := section(t, swiftErr, "public static let table:", "private static let categories", "the table")
	rows := regexp.MustCompile(`\(\s*\.(\x60?\w+\x60?),\s*\.(\x60?\w+\x60?),`).FindAllStringSubmatch(table, -1)
	out := map[string]Status{}
	for _, m := range rows {
		code, ok := codeOf[unquote(m[1])]
		if !ok {
			t.Fatalf("the table names Code.%s, which has no rawValue", m[1])
		}
		status, ok := statusOf[unquote(m[2])]
		if !ok {
			t.Fatalf("the table gives %s the category %s, which has no status", code, m[2])
		}
		if _, dup := out[code]; dup {
			t.Fatalf("the table lists %s twice", code)
		}
		out[code] = status
	}
	if len(out) != len(codeOf) || len(out) < 40 {
		t.Fatalf("the table has %d rows, Code has %d constants: misread", len(out), len(codeOf))
	}
	return out
}

// statusByName maps "NA_EAUTH" → StatusAuth through Status.String.
func statusByName(t *testing.T, name string) Status {
	for s := range statusNames {
		if s.String() == name {
			return s
		}
	}
	t.Fatalf("no Go Status for %s", name)
	return 0
}

func sortedCodes[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestSentinelsMatchTheLibrarysTable(t *testing.T) {
	want := libraryTable(t)
	for _, code := range sortedCodes(want) {
		s, ok := sentinels[code]
		switch {
		case !ok:
			t.Errorf("the library's code %q (%s) has no Go sentinel", code, want[code].String())
		case s.Status != want[code]:
			t.Errorf("the sentinel for %q has status %s; the library's is %s", code, s.Status.String(),
				want[code].String())
		}
	}
	for _, code := range sortedCodes(sentinels) {
		if _, ok := want[code]; !ok {
			t.Errorf("the Go sentinel for %q names a code the library does not have", code)
		}
	}
}

// The header's status enum lists each code under its status ("codes: a, b"), and docs/errors.md has one row per
// code: both say what the Swift table says.
func TestHeaderAndDocsAgreeWithTheTable(t *testing.T) {
	want := libraryTable(t)
	header := section(t, readRepo(t, "include/nativeauth.h"), "enum {\n    NA_OK", "};", "the header's status enum")
	fromHeader := map[string]Status{}
	entry := regexp.MustCompile(`(NA_E[A-Z]+)\s*=\s*-?\d+,\s*/\*([\s\S]*?)\*/`)
	for _, m := range entry.FindAllStringSubmatch(header, -1) {
		i := strings.Index(m[2], "codes:")
		if i < 0 {
			continue
		}
		for _, code := range strings.FieldsFunc(m[2][i+len("codes:"):], func(r rune) bool {
			return r == ',' || r == ' ' || r == '\n'
		}) {
			fromHeader[code] = statusByName(t, m[1])
		}
	}
	fromDocs := map[string]Status{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `(NA_[A-Z]+)` \\|").FindAllStringSubmatch(
		readRepo(t, "docs/errors.md"), -1) {
		fromDocs[m[1]] = statusByName(t, m[2])
	}
	for name, got := range map[string]map[string]Status{"include/nativeauth.h": fromHeader,
		"docs/errors.md": fromDocs} {
		for _, code := range sortedCodes(want) {
			if got[code] != want[code] {
				t.Errorf("%s: %q is %s; the table says %s", name, code, got[code].String(), want[code].String())
			}
		}
		for _, code := range sortedCodes(got) {
			if _, ok := want[code]; !ok {
				t.Errorf("%s lists %q, which the table does not have", name, code)
			}
		}
	}
}

// The Status constants are the library's NA_* values, under their C names.
func TestStatusesMatchTheLibrary(t *testing.T) {
	swift := section(t, readRepo(t, "Sources/NativeAuthCABI/Status.swift"), "public enum NAStatus", "/// A one-line",
		"Status.swift")
	value := map[string]int{}
	for _, m := range regexp.MustCompile(`case (\x60?\w+\x60?) = (-?\d+)`).FindAllStringSubmatch(swift, -1) {
		value[strings.Trim(m[1], "`")], _ = strconv.Atoi(m[2])
	}
	names := regexp.MustCompile(`case \.(\w+): return "(NA_\w+)"`).FindAllStringSubmatch(swift, -1)
	if len(names) != len(value) || len(names) != len(statusNames) {
		t.Fatalf("%d Swift statuses, %d names, %d Go statuses", len(value), len(names), len(statusNames))
	}
	for _, m := range names {
		if s := statusByName(t, m[2]); int(s) != value[m[1]] {
			t.Errorf("%s is %d in Go, %d in the library", m[2], int(s), value[m[1]])
		}
	}
}

// Every Err… = sentinel("code", …) / family(…) declaration is registered and named Err + the code in MixedCaps,
// initialisms in capitals (docs/conventions.md).
func TestSentinelNames(t *testing.T) {
	initialisms := map[string]string{"id": "ID", "tls": "TLS", "mfa": "MFA", "url": "URL", "uri": "URI", "api": "API",
		"http": "HTTP", "dpop": "DPoP"}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != 1 {
			return true
		}
		call, ok := spec.Values[0].(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if fn, ok := call.Fun.(*ast.Ident); !ok || (fn.Name != "sentinel" && fn.Name != "family") {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok {
			t.Errorf("%s: the code is not a literal", spec.Names[0].Name)
			return true
		}
		code, _ := strconv.Unquote(lit.Value)
		declared++
		want := "Err"
		for _, word := range strings.Split(code, "_") {
			if up, ok := initialisms[word]; ok {
				want += up
			} else {
				want += strings.ToUpper(word[:1]) + word[1:]
			}
		}
		if spec.Names[0].Name != want {
			t.Errorf("the sentinel for %q is %s; the convention names it %s", code, spec.Names[0].Name, want)
		}
		return true
	})
	if declared != len(sentinels) {
		t.Errorf("%d sentinel declarations, %d registered", declared, len(sentinels))
	}
}
