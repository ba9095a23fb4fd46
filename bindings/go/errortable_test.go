package nativeauth

import (
	"encoding/csv"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docs/errors.tsv is the one list of the library's error codes (.ci/error-table says its columns): the Go
// sentinels must be exactly its codes, each under the name and with the status the table gives. The statuses'
// values come from the header, whose status enum is their source.

var repoRoot = filepath.Join("..", "..")

func readRepo(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatalf("the library's sources are needed for this test: %v", err)
	}
	return string(b)
}

type tableRow struct{ code, status, goName string }

// errorTable reads docs/errors.tsv: a header row naming the columns, then one row per code.
func errorTable(t *testing.T) []tableRow {
	t.Helper()
	r := csv.NewReader(strings.NewReader(readRepo(t, "docs/errors.tsv")))
	r.Comma, r.LazyQuotes = '\t', true
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	column := map[string]int{}
	for i, name := range header {
		column[name] = i
	}
	for _, name := range []string{"code", "status", "go_name"} {
		if _, ok := column[name]; !ok {
			t.Fatalf("docs/errors.tsv has no column %q", name)
		}
	}
	var rows []tableRow
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, tableRow{f[column["code"]], f[column["status"]], f[column["go_name"]]})
	}
	if len(rows) < 40 {
		t.Fatalf("docs/errors.tsv misread: %d rows", len(rows))
	}
	return rows
}

// headerStatuses maps each NA_* name of the header's status enum to its value.
func headerStatuses(t *testing.T) map[string]int {
	t.Helper()
	h := readRepo(t, "include/nativeauth.h")
	i := strings.Index(h, "enum {\n    NA_OK")
	j := strings.Index(h[i:], "};")
	if i < 0 || j < 0 {
		t.Fatal("no status enum in include/nativeauth.h")
	}
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`\b(NA_\w+)\s*=\s*(-?\d+)`).FindAllStringSubmatch(h[i:i+j], -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

// sentinelNames maps each code to the name of the variable errors.go declares for it (Err… = sentinel("code", …)
// or family(…)), read from the source's syntax tree.
func sentinelNames(t *testing.T) map[string]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
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
		if _, dup := names[code]; dup {
			t.Errorf("two sentinel declarations for %q", code)
		}
		names[code] = spec.Names[0].Name
		return true
	})
	return names
}

func TestSentinelsAreTheTablesCodes(t *testing.T) {
	rows := errorTable(t)
	values := headerStatuses(t)
	names := sentinelNames(t)
	want := map[string]bool{}
	for _, row := range rows {
		want[row.code] = true
		s, ok := sentinels[row.code]
		if !ok {
			t.Errorf("the library's code %q (%s) has no Go sentinel", row.code, row.status)
			continue
		}
		if s.Status.String() != row.status || int(s.Status) != values[row.status] {
			t.Errorf("the sentinel for %q has status %s (%d); the table says %s (%d)", row.code, s.Status.String(),
				int(s.Status), row.status, values[row.status])
		}
		if names[row.code] != row.goName {
			t.Errorf("the sentinel for %q is declared as %s; the table names it %s", row.code, names[row.code],
				row.goName)
		}
	}
	for _, code := range sortedCodes(sentinels) {
		if !want[code] {
			t.Errorf("the Go sentinel for %q names a code the table does not have", code)
		}
	}
	if len(names) != len(sentinels) {
		t.Errorf("%d sentinel declarations, %d registered", len(names), len(sentinels))
	}
}

// The Status constants carry the header's values (cgo reads them from the header), and each is named as the header
// names that value.
func TestStatusNamesAreTheHeaders(t *testing.T) {
	values := headerStatuses(t)
	delete(values, "NA__LAST")
	got := map[string]int{}
	for s := range statusNames {
		got[s.String()] = int(s)
	}
	if !reflect.DeepEqual(got, values) {
		t.Errorf("Go's statuses %v; the header's %v", got, values)
	}
}

func sortedCodes[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
