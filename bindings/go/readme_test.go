package nativeauth

import (
	"os"
	"strings"
	"testing"
)

// The first program of README.md is examples/hello/main.go, which `go vet ./...` and the build check: the two
// copies must not drift apart.
func TestReadmeProgramIsTheHelloExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("examples/hello/main.go")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```go\n// Command hello"
	text := string(readme)
	i := strings.Index(text, start)
	if i < 0 {
		t.Fatal("README.md has no ```go block starting with the hello example's package comment")
	}
	block := text[i+len("```go\n"):]
	end := strings.Index(block, "```\n")
	if end < 0 {
		t.Fatal("README.md: the hello example's block is not closed")
	}
	if block[:end] != string(example) {
		t.Errorf("README.md's first program differs from examples/hello/main.go: copy the file into the README")
	}
}
