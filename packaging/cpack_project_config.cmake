# Read by cpack before it builds the packages (CPACK_PROJECT_CONFIG_FILE).
# Without a summary, CPackDeb takes each component's description as it is:
# its first line the synopsis, the rest the extended description.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
