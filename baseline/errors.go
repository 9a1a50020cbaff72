package baseline

import "errors"

// Sentinels classify the package's errors; match them with errors.Is.
var (
	// ErrVersion: a model file of another format or version.
	ErrVersion = errors.New("not a baseline model of this version")
	// ErrNoSplits: a data directory without the sft and rl splits build
	// writes.
	ErrNoSplits = errors.New("no sft and rl splits")
	// ErrTask: data of different tasks, or a probe of a task the model was
	// not trained on.
	ErrTask = errors.New("task mismatch")
	// ErrData: training data the estimator cannot be fitted on.
	ErrData = errors.New("cannot fit")
	// ErrConfig is wrapped by Config validation errors.
	ErrConfig = errors.New("invalid baseline config")
)
