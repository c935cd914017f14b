"""One claimed batch's life around its tasks: claims, commits, deferrals, held chains, the page
cache, the job cache."""
