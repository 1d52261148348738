# A response file as `bfhpo infer` reads it, for the bench's R scripts
# (stan_reference.R, laplace_reference.R): a header of item names, an
# optional id column named id/person/person_id/respondent, empty or NA =
# missing. Returns the persons x items data frame, the persons' ids (the id
# column, else the row numbers) and the item names.
read_responses <- function(data_file) {
  responses <- read.csv(data_file, check.names = FALSE, na.strings = c("", "NA", "na", "Na"))
  id_names <- c("id", "person", "person_id", "respondent")
  id_column <- which(tolower(names(responses)) %in% id_names)
  person_ids <- if (length(id_column)) responses[[id_column[1]]] else seq_len(nrow(responses))
  responses <- responses[, !(tolower(names(responses)) %in% id_names), drop = FALSE]
  list(responses = responses, person_ids = person_ids, items = names(responses))
}

# The optional `--persons-out FILE` of both scripts taken out of the
# command line's arguments: list(args = the rest, file = FILE or NA).
take_persons_out <- function(args) {
  flag <- which(args == "--persons-out")
  if (!length(flag)) return(list(args = args, file = NA))
  if (flag[1] == length(args)) stop("--persons-out needs a file")
  list(args = args[-c(flag[1], flag[1] + 1)], file = args[flag[1] + 1])
}

# A prior's parameter from the environment (LOG_A_MEAN, LOG_A_SD, B_MEAN, B_SD), else bfhpo's default.
prior <- function(name, default) as.numeric(Sys.getenv(name, as.character(default)))
