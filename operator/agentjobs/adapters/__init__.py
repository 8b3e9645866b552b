"""The only code that touches the outside world: files, the Kubernetes API, S3."""
