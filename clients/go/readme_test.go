package retryd

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's examples are the Example functions of example_test.go, which compile with every change.
func TestTheReadmeQuotesTheExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile(`(?ms)^func Example\w+\(\) \{\n(.*?)^\}\n`).FindAllStringSubmatch(string(source), -1)
	if len(examples) < 3 {
		t.Fatalf("found %d examples", len(examples))
	}
	for _, example := range examples {
		if !strings.Contains(string(readme), example[1]) {
			t.Errorf("README.md does not quote this example of example_test.go as it is:\n%s", example[1])
		}
	}
}
