locals {
  # The main database, and the dispatcher's identities (api_keys, revoked_sessions) in one of
  # their own: Firestore grants per database, not per collection, so only there can the worker
  # and renderer be kept from writing an API key (iam.tf: their grants are conditioned on
  # firestore_database).
  firestore_databases = var.create_firestore_database ? {
    main       = var.firestore_database
    identities = var.identity_database
  } : {}
}

resource "google_firestore_database" "databases" {
  for_each = local.firestore_databases

  project     = var.project_id
  name        = each.value
  location_id = local.firestore_location
  type        = "FIRESTORE_NATIVE"

  point_in_time_recovery_enablement = var.firestore_point_in_time_recovery ? "POINT_IN_TIME_RECOVERY_ENABLED" : "POINT_IN_TIME_RECOVERY_DISABLED"
  delete_protection_state           = var.firestore_delete_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  # `terraform destroy` only forgets a database; deleting data is an explicit, manual step.
  deletion_policy = "ABANDON"

  lifecycle {
    precondition {
      condition     = var.identity_database != var.firestore_database
      error_message = "identity_database must differ from firestore_database: the worker and renderer may use the latter."
    }
  }

  depends_on = [google_project_service.apis]
}

# the two databases were two resources before: state moves, nothing is replaced
moved {
  from = google_firestore_database.main[0]
  to   = google_firestore_database.databases["main"]
}

moved {
  from = google_firestore_database.identities[0]
  to   = google_firestore_database.databases["identities"]
}

# jobs: where status == X order by created_at desc (job listing filtered by status).
resource "google_firestore_index" "jobs_status_created_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "jobs"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# jobs of one tenant, newest first (a member's list; an admin's tenant filter), and by status.
resource "google_firestore_index" "jobs_tenant_created_at" {
  for_each = {
    all       = []
    by_status = ["status"]
  }
  project     = var.project_id
  database    = var.firestore_database
  collection  = "jobs"
  query_scope = "COLLECTION"

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  dynamic "fields" {
    for_each = each.value
    content {
      field_path = fields.value
      order      = "ASCENDING"
    }
  }

  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# api_keys of one tenant, newest first (GET /v1/keys?tenant=).
resource "google_firestore_index" "api_keys_tenant_created_at" {
  project     = var.project_id
  database    = var.identity_database
  collection  = "api_keys"
  query_scope = "COLLECTION"

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# monitors of one tenant, newest first (GET /v1/monitors), then by id (its page tokens).
resource "google_firestore_index" "monitors_tenant_created_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "monitors"
  query_scope = "COLLECTION"

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "DESCENDING"
  }

  fields {
    field_path = "__name__"
    order      = "DESCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# active monitors whose next check time has come, soonest first (the schedule's tick).
resource "google_firestore_index" "monitors_status_next_check_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "monitors"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }

  fields {
    field_path = "next_check_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# unfinished checks of every monitor, oldest first (collection group: the tick compares those
# whose job has ended).
resource "google_firestore_index" "checks_open_created_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "checks"
  query_scope = "COLLECTION_GROUP"

  fields {
    field_path = "open"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# one tenant's active monitors whose time has come (the tick, when the read of everyone's is
# full: a tenant's backlog hides no other's).
resource "google_firestore_index" "monitors_tenant_status_next_check_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "monitors"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  fields {
    field_path = "next_check_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# one tenant's unfinished checks, oldest first (the tick, in a backlog, as above).
resource "google_firestore_index" "checks_open_tenant_created_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "checks"
  query_scope = "COLLECTION_GROUP"

  fields {
    field_path = "open"
    order      = "ASCENDING"
  }

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# stats_slots of one tenant over a range of slots (a member's stats, usage and quota).
resource "google_firestore_index" "stats_slots_tenant_slot" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "stats_slots"
  query_scope = "COLLECTION"

  fields {
    field_path = "tenant"
    order      = "ASCENDING"
  }

  fields {
    field_path = "slot"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# The recovery query: jobs still publishing, created before a cut-off.
resource "google_firestore_index" "jobs_publishing_created_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "jobs"
  query_scope = "COLLECTION"

  fields {
    field_path = "publishing"
    order      = "ASCENDING"
  }

  fields {
    field_path = "created_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# TTL policies: Firestore deletes documents (typically within 24 h) once `expire_at` is in
# the past. The services set expire_at = now + retention_days. The field is also exempted
# from single-field indexing (empty index_config): it is never queried, and a monotonically
# increasing indexed timestamp would create write hot-spots.
# `slots` and `wants` (hosts/{host}/...) are subcollections, and `tasks` is a root collection
# that was one (jobs/{id}/tasks, before task_documents.py): a policy applies to the collection
# group.
resource "google_firestore_field" "expire_at_ttl" {
  for_each = local.ttl_collections

  project    = var.project_id
  database   = var.firestore_database
  collection = each.key
  field      = "expire_at"

  ttl_config {}

  index_config {}

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# Signed-out dashboard sessions, deleted once the session would have expired anyway.
resource "google_firestore_field" "revoked_sessions_ttl" {
  project    = var.project_id
  database   = var.identity_database
  collection = "revoked_sessions"
  field      = "expire_at"

  ttl_config {}

  index_config {}

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# The reconcile query (collection group, every job's batches): active batches not written
# since a cut-off, oldest first.
resource "google_firestore_index" "batches_active_updated_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "batches"
  query_scope = "COLLECTION_GROUP"

  fields {
    field_path = "active"
    order      = "ASCENDING"
  }

  fields {
    field_path = "updated_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# The same query of jobs that hold their one batch (one-URL jobs: the batch is a map `b` of
# the job document).
resource "google_firestore_index" "jobs_batch_active_updated_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "jobs"
  query_scope = "COLLECTION"

  fields {
    field_path = "b.active"
    order      = "ASCENDING"
  }

  fields {
    field_path = "b.updated_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# The reconcile's resumption of held batches (collection group): held batches older than a
# cut-off (a job's window on a host whose chain of releases broke).
resource "google_firestore_index" "batches_held_updated_at" {
  project     = var.project_id
  database    = var.firestore_database
  collection  = "batches"
  query_scope = "COLLECTION_GROUP"

  fields {
    field_path = "held"
    order      = "ASCENDING"
  }

  fields {
    field_path = "updated_at"
    order      = "ASCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# "Has any batch of any job been written since?" (reconcile leaves a moving system alone):
# a single-field index on the batches collection group.
resource "google_firestore_field" "batches_updated_at" {
  project    = var.project_id
  database   = var.firestore_database
  collection = "batches"
  field      = "updated_at"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# Deferred batches waiting for their time (held_batches.py): a job's waiting batches (a cancel
# wakes them: COLLECTION) and those past their time in every job (the reconcile: COLLECTION_GROUP).
resource "google_firestore_field" "batches_wait_until" {
  project    = var.project_id
  database   = var.firestore_database
  collection = "batches"
  field      = "wait_until"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# Dead letters and job retries: task results by status, most recently settled first, of one
# job (at the root `tasks`, by `job_id`; under a job, `jobs/{id}/tasks`, results written before
# the root layout: COLLECTION) or of every job (COLLECTION_GROUP: both), and dead letters of
# one host or tenant.
resource "google_firestore_index" "tasks_by_status" {
  for_each = {
    job_id_status          = { scope = "COLLECTION", fields = ["job_id", "status"] }
    job_status             = { scope = "COLLECTION", fields = ["status"] }
    all_status             = { scope = "COLLECTION_GROUP", fields = ["status"] }
    all_status_host        = { scope = "COLLECTION_GROUP", fields = ["status", "host"] }
    all_status_tenant      = { scope = "COLLECTION_GROUP", fields = ["status", "tenant"] }
    all_status_tenant_host = { scope = "COLLECTION_GROUP", fields = ["status", "tenant", "host"] }
  }

  project     = var.project_id
  database    = var.firestore_database
  collection  = "tasks"
  query_scope = each.value.scope

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path = fields.value
      order      = "ASCENDING"
    }
  }

  fields {
    field_path = "updated_at"
    order      = "DESCENDING"
  }

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}

# A page cache entry is read by its key only: its one other field is not indexed.
resource "google_firestore_field" "page_cache_entry" {
  project    = var.project_id
  database   = var.firestore_database
  collection = "page_cache"
  field      = "p"

  index_config {}

  depends_on = [google_firestore_database.databases, google_project_service.apis]
}
