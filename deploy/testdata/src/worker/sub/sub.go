package sub

// Config is reached through an envPrefix from another package.
type Config struct {
	Addr string `env:"ADDR" envDefault:"localhost:6334"`
}
