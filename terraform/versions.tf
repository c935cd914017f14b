terraform {
  # 1.6+: stable `check` blocks, `terraform test`, and the `-backend-config` semantics
  # relied on by docs/deploy.md.
  required_version = ">= 1.6.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0, < 7.0"
    }
  }
}
