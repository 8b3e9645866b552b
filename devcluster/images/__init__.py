"""The images devcluster's node runs, built from their Dockerfiles with buildah, without a
Docker daemon or a registry, and cached as OCI archives keyed by the hash of their inputs."""

from devcluster.images.build import node_images
from devcluster.images.catalog import PAUSE_IMAGE

__all__ = ["PAUSE_IMAGE", "node_images"]
