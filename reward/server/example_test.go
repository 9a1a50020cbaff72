package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"bagen-data/reward/server"
)

func ExampleNew() {
	h, err := server.New(server.Config{})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/slime", "application/json",
		strings.NewReader(`{"prompt":"…","response":"<answer>[140, 160]</answer>","label":"150"}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 200 1.56
}
