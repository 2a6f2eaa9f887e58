package retryd

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The service's OpenAPI document is the contract: every JSON field this client reads or sends must be a property of
// the schema it stands for, with a type that decodes (a field the document lets be null is a pointer here), every
// property a request schema requires must be one the client can send, and every route it calls must be there.

type schema struct {
	Type       any                `json:"type"`
	Ref        string             `json:"$ref"`
	AnyOf      []*schema          `json:"anyOf"`
	OneOf      []*schema          `json:"oneOf"`
	Enum       []any              `json:"enum"`
	Items      *schema            `json:"items"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
}

type openAPI struct {
	Paths      map[string]map[string]struct{ Parameters []struct{ Name, In string } }
	Components struct{ Schemas map[string]*schema }
}

func fetchOpenAPI(t *testing.T) openAPI {
	res, err := http.Get(serviceURL(t) + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc openAPI
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// types of a schema, $ref, anyOf and oneOf followed: "string", "integer", "null", "object", …
func (d openAPI) types(s *schema) map[string]bool {
	out := map[string]bool{}
	switch {
	case s == nil:
	case s.Ref != "":
		return d.types(d.resolve(s))
	case len(s.AnyOf)+len(s.OneOf) > 0:
		for _, alt := range append(s.AnyOf, s.OneOf...) {
			for k := range d.types(alt) {
				out[k] = true
			}
		}
	default:
		switch v := s.Type.(type) {
		case string:
			out[v] = true
		case []any:
			for _, one := range v {
				out[one.(string)] = true
			}
		}
	}
	return out
}

func (d openAPI) resolve(s *schema) *schema {
	if s != nil && s.Ref != "" {
		return d.resolve(d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")])
	}
	for _, alt := range append(append([]*schema{}, s.AnyOf...), s.OneOf...) {
		if alt.Ref != "" || alt.Properties != nil {
			return d.resolve(alt)
		}
	}
	return s
}

// check compares a Go struct with an object schema, recursing into the struct fields that are objects too.
func (d openAPI) check(t *testing.T, where string, goType reflect.Type, s *schema, request bool) {
	s = d.resolve(s)
	if s == nil || s.Properties == nil {
		t.Errorf("%s: the document has no object schema for %s", where, goType)
		return
	}
	sent := map[string]bool{}
	for _, f := range fields(goType) {
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		sent[name] = true
		property, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s: the document's schema has no such property (it has %s)", where, name, strings.Join(keys(s.Properties), ", "))
			continue
		}
		d.checkType(t, where+"."+name, f.Type, property, request)
	}
	if request {
		for _, name := range s.Required {
			if !sent[name] {
				t.Errorf("%s: the document requires %s, which %s cannot send", where, name, goType)
			}
		}
	}
}

func (d openAPI) checkType(t *testing.T, where string, goType reflect.Type, s *schema, request bool) {
	types := d.types(s)
	nullable := goType.Kind() == reflect.Pointer || goType.Kind() == reflect.Map || goType.Kind() == reflect.Slice || goType.Kind() == reflect.Interface
	if types["null"] && !nullable && !request {
		t.Errorf("%s: the document lets it be null, the client reads it as %s", where, goType)
	}
	if goType.Kind() == reflect.Pointer {
		goType = goType.Elem()
	}
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Float64: "number", reflect.Bool: "boolean", reflect.Map: "object", reflect.Slice: "array", reflect.Struct: "object"}[goType.Kind()]
	switch {
	case want == "":
		// any: a body may be any JSON value.
	case !types[want] && !(want == "number" && types["integer"]) && len(types) > 0:
		t.Errorf("%s: the document says %v, the client has %s", where, keys(types), goType)
	case goType.Kind() == reflect.Struct:
		d.check(t, where, goType, s, request)
	case goType.Kind() == reflect.Slice && goType.Elem().Kind() == reflect.Struct:
		d.check(t, where+"[]", goType.Elem(), d.resolve(s).Items, request)
	}
}

// fields lists a struct's JSON fields, those of embedded structs included.
func fields(goType reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < goType.NumField(); i++ {
		f := goType.Field(i)
		if f.Anonymous {
			out = append(out, fields(f.Type)...)
		} else if tag := f.Tag.Get("json"); tag != "" && tag != "-" {
			out = append(out, f)
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestTheClientsFieldsAreTheDocuments(t *testing.T) {
	doc := fetchOpenAPI(t)
	schemas := doc.Components.Schemas
	doc.check(t, "EnqueueRequest", reflect.TypeOf(EnqueueRequest{}), schemas["EnqueueRequest"], true)
	doc.check(t, "BatchRequest", reflect.TypeOf(batchRequest{}), schemas["BatchRequest"], true)
	doc.check(t, "Task", reflect.TypeOf(Task{}), schemas["Task"], false)
	doc.check(t, "TaskSummary", reflect.TypeOf(TaskSummary{}), schemas["TaskSummary"], false)
	doc.check(t, "TaskPage", reflect.TypeOf(TaskPage{}), schemas["TaskPage"], false)
	doc.check(t, "BatchResult", reflect.TypeOf(batchResult{}), schemas["BatchResult"], false)
	doc.check(t, "Problem", reflect.TypeOf(Problem{}), schemas["Problem"], false)
	var statuses []string
	for _, s := range schemas["Task"].Properties["status"].Enum {
		statuses = append(statuses, s.(string))
	}
	for _, s := range []TaskStatus{StatusPending, StatusInFlight, StatusSucceeded, StatusFailed, StatusExhausted, StatusCancelled} {
		if !contains(statuses, string(s)) {
			t.Errorf("TaskStatus %s is not in the document's %v", s, statuses)
		}
	}
	for _, s := range statuses {
		if !contains([]string{"PENDING", "IN_FLIGHT", "SUCCEEDED", "FAILED", "EXHAUSTED", "CANCELLED"}, s) {
			t.Errorf("the document has status %s, which TaskStatus does not name (Ended() may be wrong)", s)
		}
	}
}

func TestTheRoutesTheClientCallsAreTheDocuments(t *testing.T) {
	doc := fetchOpenAPI(t)
	for _, route := range []struct {
		method, path string
		params       []string
	}{
		{"post", "/retry-tasks", nil},
		{"post", "/retry-tasks/batch", []string{"header:prefer"}},
		{"get", "/retry-tasks/{taskId}", []string{"path:taskId", "query:waitMs"}},
		{"delete", "/retry-tasks/{taskId}", []string{"path:taskId"}},
		{"post", "/retry-tasks/{taskId}/replay", []string{"path:taskId"}},
		{"get", "/dead-letters", []string{"query:status", "query:policyId", "query:targetKey", "query:cursor", "query:limit"}},
	} {
		op, ok := doc.Paths[route.path][route.method]
		if !ok {
			t.Errorf("%s %s is not in the document", route.method, route.path)
			continue
		}
		var params []string
		for _, p := range op.Parameters {
			params = append(params, p.In+":"+strings.ToLower(p.Name))
		}
		for _, p := range route.params {
			if !contains(params, strings.ToLower(p)) {
				t.Errorf("%s %s has no parameter %s (it has %v)", route.method, route.path, p, params)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, one := range list {
		if one == s {
			return true
		}
	}
	return false
}
