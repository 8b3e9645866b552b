// Command kstatus prints kstatus's verdict on each object it reads: the rules of
// sigs.k8s.io/cli-utils/pkg/kstatus/status, which Flux, kpt and cli-utils' appliers use to
// wait for a resource. It reads a JSON array of objects on stdin and writes a JSON array of
// {"status", "message"}, one per object, in the same order.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: reading stdin: %v\n", err)
		os.Exit(2)
	}
	// apimachinery's decoder keeps integers int64, as kstatus's accessors require.
	var objects []interface{}
	if err := utiljson.Unmarshal(data, &objects); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: stdin is not a JSON array: %v\n", err)
		os.Exit(2)
	}
	verdicts := make([]verdict, 0, len(objects))
	for _, item := range objects {
		object, ok := item.(map[string]interface{})
		if !ok {
			fmt.Fprintf(os.Stderr, "kstatus: %v is not an object\n", item)
			os.Exit(2)
		}
		result, err := status.Compute(&unstructured.Unstructured{Object: object})
		if err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
			os.Exit(1)
		}
		verdicts = append(verdicts, verdict{Status: result.Status.String(), Message: result.Message})
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
		os.Exit(1)
	}
}
