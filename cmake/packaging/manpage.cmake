# gpumemtrace.1 from the CLI's own --help texts (so the man page never drifts from the code):
# NAME and SYNOPSIS, then `gpumemtrace --help` and every subcommand's --help verbatim.
#   cmake -DCLI=bin/gpumemtrace -DOUT=gpumemtrace.1 -DVERSION=0.1.0 -P manpage.cmake
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE main_help COMMAND_ERROR_IS_FATAL ANY)
# The subcommands: the indented words under "Subcommands:".
string(REGEX MATCH "Subcommands:\n([^\n]+\n)+" block "${main_help}")
string(REGEX MATCHALL "\n  [a-z]+" words "\n${block}")
string(CONCAT page ".TH GPUMEMTRACE 1 \"\" \"gpumemtrace ${VERSION}\" \"User Commands\"\n"
    ".SH NAME\ngpumemtrace \\- find GPU memory leaks, explain peaks and fragmentation\n"
    ".SH SYNOPSIS\n.B gpumemtrace\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n")
function(gmt_man_section title text)
    # Verbatim (.nf), with roff's escape character and leading dots made literal.
    string(REPLACE "\\" "\\e" text "${text}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
    set(page "${page}.SH \"${title}\"\n.nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()
gmt_man_section("DESCRIPTION" "${main_help}")
foreach(word IN LISTS words)
    string(STRIP "${word}" command)
    execute_process(COMMAND ${CLI} ${command} --help OUTPUT_VARIABLE help
        COMMAND_ERROR_IS_FATAL ANY)
    gmt_man_section("gpumemtrace ${command}" "${help}")
endforeach()
set(page "${page}.SH SEE ALSO\nThe documentation in /usr/share/doc/gpumemtrace.\n")
file(WRITE ${OUT} "${page}")
