# Deferred execution (tests/kernel/t_deferred.sh) on the fallback tier:
# what the person's own tools run later (git's config and hooks, IDE tasks,
# agents' settings) cannot be planted: the twins on security_path_* and
# security_file_open decide each write with the full tier's rules.
. "$ROOT/tests/kernel/t_deferred.sh"
nobpf_61_only project_repo_config_cannot_plant_a_command tool_configuration_files_are_refused_and_unchanged
