package c

func C() {}
