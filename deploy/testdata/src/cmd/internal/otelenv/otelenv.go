package otelenv

// The deploy tests list the OTEL_* variables named here; "OTEL_lower" and
// a sentence naming OTEL_X are not variables.
var names = []string{"OTEL_SERVICE_NAME", "OTEL_lower", "see OTEL_X"}
