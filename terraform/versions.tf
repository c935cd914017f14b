terraform {
  # 1.6+: stable `check` blocks, `terraform test`, and the `-backend-config` semantics
  # relied on by docs/deploy.md.
  required_version = ">= 1.6.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0, < 7.0"
    }
    # only for Identity-Aware Proxy on the dispatcher (dispatcher_iap_members): in 6.x the
    # service's iap_enabled, the IAP service agent and the IAP access grants are beta-only
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 6.35, < 7.0"
    }
  }
}
