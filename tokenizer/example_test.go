package tokenizer_test

import (
	"fmt"

	"bagen-data/tokenizer"
)

func ExampleTokenizer_Count() {
	tk, err := tokenizer.Load(tokenizer.DefaultPath()) // `make tokenizer` puts it there
	if err != nil {
		fmt.Println(err)
		return
	}
	turn := "<think>The box is left of the target.</think><answer>[120, 300]</answer>"
	fmt.Println(tk.Count(turn))
	fmt.Println(tk.Encode("\nCHAPTER XXIII"))
	// Output:
	// 24
	// [198 87439 29288 22615]
}
