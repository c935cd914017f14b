# Remote state lives in a GCS bucket (object versioning on, uniform bucket-level access).
# This is a *partial* backend configuration: the bucket and prefix are supplied at init
# time so that the same code can serve several environments/projects:
#
#   terraform init \
#     -backend-config="bucket=${PROJECT_ID}-tfstate" \
#     -backend-config="prefix=scrapejobs/prod"
#
# The GCS backend locks state natively; no extra lock table is needed.
# See docs/deploy.md ("Remote state") for creating the bucket.
# For throw-away experiments, `terraform init -backend=false` skips the backend entirely.
terraform {
  backend "gcs" {}
}
