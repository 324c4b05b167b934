package email

// CheckChunks is checkChunks, for the external golden test.
var CheckChunks = checkChunks
